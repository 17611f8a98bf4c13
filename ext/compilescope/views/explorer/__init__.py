"""The graph explorer's data and layout: groups, lanes, ordering, module paths, the static picture."""
