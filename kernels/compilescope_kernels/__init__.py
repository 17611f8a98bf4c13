"""Hand-written Triton reference kernels (softmax, layer norm, matmul) with PyTorch references.

One module per kernel, each with a launcher and a `reference_*` function:

    from compilescope_kernels.softmax import softmax, reference_softmax
    from compilescope_kernels.layer_norm import layer_norm, reference_layer_norm
    from compilescope_kernels.matmul import matmul, reference_matmul
    from compilescope_kernels.ops import softmax_op   # the softmax as a torch custom op

Nothing is imported here, so `import compilescope_kernels` needs neither torch nor triton.
On a machine without a GPU, set TRITON_INTERPRET=1 before importing a kernel module: Triton
then runs the kernels on CPU tensors through its interpreter (slow, but exact enough to check).
"""

KERNELS = ("softmax", "layer_norm", "matmul")
