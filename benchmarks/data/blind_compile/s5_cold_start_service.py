"""A serverless image-tagging worker: each new container starts on a fresh machine, builds
a small conv net, compiles it and serves a burst of requests, then is scaled down.
Nothing is carried from one container to the next (the inductor cache lives in the
container's own /tmp).

User complaint: "every cold start spends most of its time in torch.compile before the
first request is answered".
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "PyTorch recipe 'Compile Time Caching in torch.compile' (Mega-Cache: "
    "torch.compiler.save_cache_artifacts / load_cache_artifacts) and 'Compile Time "
    "Caching Configuration' (TORCHINDUCTOR_CACHE_DIR, FX graph / AOTAutograd caches) "
    "https://docs.pytorch.org/tutorials/recipes/torch_compile_caching_tutorial.html"
)
REMEDY = (
    "Warm-start from a cache: save the compile artifacts once with "
    "torch.compiler.save_cache_artifacts() and load them at container start with "
    "load_cache_artifacts(), or point TORCHINDUCTOR_CACHE_DIR at persistent/shared storage."
)
REMEDY_WORDS = (
    "save_cache_artifacts",
    "load_cache_artifacts",
    "torchinductor_cache_dir",
    "mega-cache",
)
# Added after the first judge run (disclosed in the report): the stages are distinct layers,
# nothing repeats, so regional compilation / nested_compile_region is not a remedy here.
WRONG_WORDS = ("regional", "nested_compile_region")
EXPECT = "remedy"


class Tagger(nn.Module):
    def __init__(self, n_tags=20):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.stage1 = nn.Sequential(
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU()
        )
        self.stage2 = nn.Sequential(
            nn.Conv2d(32, 64, 3, stride=2, padding=1),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.Conv2d(64, 64, 1),
            nn.ReLU(),
        )
        self.stage3 = nn.Sequential(
            nn.Conv2d(64, 96, 3, stride=2, padding=1), nn.BatchNorm2d(96), nn.SiLU()
        )
        self.head = nn.Linear(96, n_tags)

    def forward(self, img):
        x = self.stage3(self.stage2(self.stage1(self.stem(img))))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.sigmoid(self.head(x))


def run(fresh: bool):
    torch.manual_seed(0)
    model = Tagger().eval()
    compiled = torch.compile(model)
    requests = torch.randn(10, 4, 3, 64, 64)
    with torch.no_grad():
        with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
            for img in requests:  # the burst this container serves
                probs = compiled(img)
                (probs > 0.5).sum()
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
