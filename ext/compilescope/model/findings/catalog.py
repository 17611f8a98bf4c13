"""The catalog of speed and compile-time remedies, as data: the budget signature that calls for each, the change, its trade-off, its source, what we measured."""

from __future__ import annotations

from dataclasses import dataclass

from ..place import Place
from .parts import Fix, Setting


@dataclass(frozen=True)
class Remedy:
    """One known remedy. `signature` says, in words, which part of the step budget calls for
    it; `measured` what it gave where we tried it (compilescope's own runs, RESULTS.md)."""

    key: str
    title: str
    signature: str
    change: str
    tradeoff: str
    source: str
    measured: str = ""
    settings: tuple[Setting, ...] = ()

    def fix(self, where: Place | None = None, change: str = "") -> Fix:
        """The remedy as a finding's fix (a setting where it is one, else a code change)."""
        tradeoff = self.tradeoff.rstrip(".") + (
            f". Measured: {self.measured}." if self.measured else ""
        )
        if self.settings:
            return Fix("setting", self.title, self.settings, tradeoff=tradeoff, source=self.source)
        return Fix(
            "code",
            self.title,
            change=change or self.change,
            where=where,
            tradeoff=tradeoff,
            source=self.source,
        )


TUNING_GUIDE = "PyTorch Performance Tuning Guide"
_ENTRIES = (
    Remedy(
        "pinned_memory",
        "pinned host memory and non_blocking copies",
        "host-to-device copies from pageable memory outside the compiled graphs",
        "load batches into pinned memory (`DataLoader(..., pin_memory=True)` or "
        "`batch.pin_memory()`) and copy with `.to(device, non_blocking=True)`",
        "pinned memory is page-locked host memory: too much of it starves the host; a "
        "non_blocking copy must not be read on the host before a sync",
        f"{TUNING_GUIDE}: use pinned memory and non_blocking copies",
        "a small CNN fed pageable CPU batches: 24.6-25.2 ms -> 9.3 ms a step (2.7x), H200",
    ),
    Remedy(
        "host_work_off_the_step",
        "move the host's other work out of the step",
        "a GPU idle far longer than the step's kernel launches take: the CPU is busy with "
        "other work between kernels",
        "find it in a profile of the step's host side (torch.profiler with Python stacks, or "
        "py-spy); prepare batches in DataLoader workers (`num_workers=4, pin_memory=True, "
        "persistent_workers=True`) so they are ready when the step asks; do on the device, "
        "batched, what a Python loop does item by item; drop per-step calls into the CUDA "
        "runtime (`torch.cuda.empty_cache()`, `synchronize()`)",
        "workers take CPU cores and memory, and their own start-up time",
        f"{TUNING_GUIDE}: enable asynchronous data loading and augmentation",
    ),
    Remedy(
        "create_on_device",
        "create tensors directly on the device",
        "tensor factories (`torch.randn`, `torch.zeros`, ...) taking the host's time in the "
        "step, their results copied to the device",
        "pass the device to the factory: `torch.randn(shape, device=x.device)` instead of "
        "`torch.randn(shape).to(device)`, or `torch.randn_like(x)`; for constants, make them "
        "once before the loop (a buffer of the module)",
        "random numbers drawn on the GPU differ from the CPU's for the same seed",
        f"{TUNING_GUIDE}: create tensors directly on the target device",
    ),
    Remedy(
        "keep_cached_memory",
        "let the caching allocator keep its memory",
        "calls to cudaMalloc and cudaFree inside the steps",
        "remove `torch.cuda.empty_cache()` (and `gc.collect()`) from the loop; where memory "
        "runs short or fragments, set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` "
        "before starting instead of emptying the cache",
        "other processes on the GPU no longer get the cached memory back between steps",
        "PyTorch CUDA semantics: memory management (empty_cache does not free memory for "
        "PyTorch, only for other processes)",
    ),
    Remedy(
        "data_on_device",
        "keep the data on the device",
        "host-to-device copies every step (pinned or not)",
        "move the dataset (or the next batches) to the device once, before the loop, and index "
        "it there; or prefetch the next batch on a side stream while this step runs",
        "the data must fit in device memory; a prefetch needs a second stream and an event",
        f"{TUNING_GUIDE}: avoid unnecessary CPU-GPU synchronization and copies",
    ),
    Remedy(
        "avoid_syncs",
        "keep values on the device, read them rarely",
        "device-to-host copies or host syncs every step (`.item()`, `.cpu()`, `print(loss)`)",
        "accumulate the values in a device tensor and read them every N steps (e.g. "
        "`running += loss.detach()`, `.item()` every 50 steps)",
        "the logged values arrive later, in batches",
        f"{TUNING_GUIDE}: avoid unnecessary CPU-GPU synchronization",
        "a GPT-2 logging grad norms with .item() each step (compilescope speed zoo, H100)",
    ),
    Remedy(
        "sdpa",
        "scaled_dot_product_attention for hand-written attention",
        "softmax over a matmul of queries and keys, then a matmul with values, in a compiled graph",
        "replace `softmax(q @ k.transpose(-2, -1) * scale (+ mask)) @ v` with "
        "`torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)` (or "
        "`attn_mask=`)",
        "dropout inside attention goes through `dropout_p`; a custom score function needs "
        "FlexAttention instead",
        "PyTorch tutorial: scaled dot product attention (SDPA)",
        "causal attention at 2048 tokens in bf16: 11.2 -> 6.2 ms (1.8x), H200",
    ),
    Remedy(
        "compile_the_rest",
        "compile the code that runs these ops",
        "eager ATen ops outside every compiled graph (code before or after the compiled "
        "function, or at a graph break)",
        "move the ops into the compiled function (compile the whole step, or the function that "
        "calls them), or remove the graph break that leaves them out",
        "more code to compile (compile time); code Dynamo cannot trace stays eager",
        "torch.compile docs: what is compiled (frames, graph breaks)",
    ),
    Remedy(
        "compile_model",
        "compile the model",
        "a loop whose steps ran with nothing compiled",
        "wrap the model (or the training step) with `torch.compile`: `model = torch.compile(model)`; "
        "compilescope then shows what it made of it",
        "compile time before the first steps (seconds to minutes); code Dynamo cannot trace "
        "stays eager (graph breaks)",
        "torch.compile tutorial (Introduction to torch.compile)",
    ),
    Remedy(
        "default_backend",
        "compile with the default backend (Inductor)",
        "graphs captured, but no kernel generated from them: a debugging backend ran them",
        'drop `backend="eager"` / `"aot_eager"` from `torch.compile(...)` (they are for '
        "bisecting a problem: Dynamo only, or Dynamo and AOTAutograd, the graph run op by op); "
        'the default, `"inductor"`, generates fused kernels',
        "compile time: Inductor generates and compiles kernels on the first call (seconds to "
        "minutes); a bug the debugging backend was bisecting may come back",
        "torch.compile troubleshooting docs (the backend='eager' / 'aot_eager' bisection); "
        "pytorch/pytorch#121370",
        measured="blind verdict set (CPU, 2 cores): a residual MLP compiled with backend='eager' "
        "ran 0.99-1.02x of eager",
    ),
    Remedy(
        "ddp_compile_inside",
        "compile the model inside DDP",
        "graph breaks in DistributedDataParallel's own forward",
        "wrap the compiled module with DDP (`DDP(torch.compile(model))`) rather than compiling "
        "the DDP module: DDP's forward stays eager and the model compiles without its breaks",
        "DDP's hooks run outside the compiled graph; if the compiled step is still slower than "
        "eager DDP, keep DDP eager",
        "torch.compile and DDP (DDPOptimizer); pytorch/pytorch DDP + compile notes",
        "a 2-GPU DDP loop of 8 MLP blocks: DDP(torch.compile(model)) 11.8 ms against "
        "torch.compile(DDP(model)) 12.2-14.4 ms and eager DDP 9.0 ms (H100, issue 42)",
    ),
    Remedy(
        "ddp_no_sync",
        "skip gradient all-reduce on accumulation steps",
        "collectives the step waits for, with gradient accumulation under DDP",
        "wrap the accumulation micro-steps in `with model.no_sync():` so only the last one "
        "all-reduces",
        "gradients are synchronized once per optimizer step (that is the point)",
        "DistributedDataParallel docs: no_sync",
    ),
    Remedy(
        "ddp_bucket",
        "let the all-reduce overlap the backward",
        "collectives the step waits for (exposed, not hidden under the backward's kernels)",
        "compile the model inside DDP (`DDP(torch.compile(model))` or `torch.compile(DDP(model))` "
        "with `torch._dynamo.config.optimize_ddp` left on), and try `bucket_cap_mb` sizes",
        "smaller buckets overlap more and launch more collectives",
        "torch.compile and DDP: DDPOptimizer; DistributedDataParallel docs: bucket_cap_mb",
        "a 2-GPU DDP loop of 8 MLP blocks: DDP(torch.compile(model)) 11.8 ms, optimize_ddp=False "
        "11.2 ms, bucket_cap_mb=200 12.6 ms, against eager DDP 9.0 ms (H100)",
    ),
    Remedy(
        "foreach_over_parameters",
        "torch's multi-tensor (foreach) ops instead of a loop over the parameters",
        "eager ops launched once per parameter tensor every step: a Python loop over the "
        "parameters or their gradients (clipping, norms, updates), one small kernel each",
        "replace the loop with torch's multi-tensor utilities: for clipping "
        "`torch.nn.utils.clip_grad_norm_(params, max_norm, foreach=True)` (or "
        "`get_total_norm` and `clip_grads_with_norm_`), for per-tensor arithmetic "
        "`torch._foreach_mul_`, `torch._foreach_add_`, `torch._foreach_norm`; or compile the "
        "function that loops (one fused graph over all the tensors)",
        "foreach ops group the tensors by device and dtype; `torch._foreach_*` are torch's "
        "own (torch.optim uses them), not a documented public API",
        "torch.nn.utils.clip_grad_norm_ docs (foreach); torch.optim docs (for-loop, foreach "
        "and fused implementations)",
    ),
    Remedy(
        "fixed_sizes",
        "pad inputs to fixed sizes",
        "size recompiles of compiles that run as CUDA graphs: each distinct size records a "
        "graph of its own",
        "pad every batch to one fixed length (`tokenizer(..., padding='max_length', "
        "max_length=512)`), or to a few buckets (`pad_to_multiple_of=64`, or sort and bucket "
        "by length), so each size is recorded once and replayed",
        "padding computes on pad tokens (mask them in the loss); longer pads cost compute",
        "torch.compile docs: CUDA graph trees (dynamic shapes record a graph per distinct "
        "size); pytorch/pytorch#188150",
    ),
    Remedy(
        "debugging_off",
        "turn debugging APIs off for training",
        "a debugging setting on in the timed steps: autograd's anomaly detection, "
        "CUDA_LAUNCH_BLOCKING=1, a profiler recording every step",
        "remove `torch.autograd.set_detect_anomaly(True)` (and `with "
        "torch.autograd.detect_anomaly():`) and any profiler left recording "
        "(`torch.profiler.profile`, `torch.autograd.profiler.emit_nvtx`) from the training run, "
        "and unset `CUDA_LAUNCH_BLOCKING`; turn them on again only to debug a NaN, a CUDA error "
        "or to profile a few steps",
        "a NaN or a CUDA error is then reported where it is noticed, not where it was made",
        f"{TUNING_GUIDE}: disable debugging APIs",
    ),
    Remedy(
        "frozen_without_grad",
        "run a frozen model without autograd",
        "a compiled backward that computes gradients for parameters no optimizer updates",
        "run the frozen model's forward under `with torch.no_grad():` (or "
        "`torch.inference_mode()`), or freeze it once: `teacher.requires_grad_(False)` and "
        "`teacher.eval()`; its outputs then need no `.detach()`",
        "no gradient can flow into that model any more: only for models you do not train",
        "PyTorch knowledge distillation tutorial (the teacher under torch.no_grad()); "
        f"{TUNING_GUIDE}",
    ),
    Remedy(
        "freeze_untrained",
        "freeze what you do not train",
        "a compiled backward that computes many more gradients than the optimizers step",
        "set `requires_grad_(False)` on the parameters no optimizer updates, before compiling "
        "(`for p in model.backbone.parameters(): p.requires_grad_(False)`; torchvision: every "
        "parameter but the new head's): the backward then stops at the first trained layer",
        "those parameters stay as they are: fine-tune them later by setting requires_grad back "
        "and adding them to the optimizer (a recompile)",
        "PyTorch transfer learning tutorial (ConvNet as fixed feature extractor: "
        "`param.requires_grad = False`)",
        "the fourth blind round's ResNet-50 with a new head (H200): 2.41x, the round author's "
        "timing (2 pairs)",
    ),
    Remedy(
        "dynamic_padding",
        "pad each batch to its longest sequence",
        "a compiled graph's attention mask mostly padding (a fixed `max_length`)",
        "pad each batch to its own longest sequence (`DataCollatorWithPadding`, "
        "`tokenizer(..., padding='longest', pad_to_multiple_of=64)`), and group samples of "
        "similar length into batches (`group_by_length=True`, bucketing) so little padding is "
        "left",
        "a new sequence length per batch: compile with dynamic shapes (`mark_dynamic`, or "
        "`pad_to_multiple_of` keeps the lengths few) or torch recompiles per length; under "
        "CUDA graphs, a graph per length",
        "Hugging Face docs: data collators (DataCollatorWithPadding) and group_by_length; "
        "'Divide Hugging Face Transformers training time by 2 or more with dynamic padding "
        "and uniform length batching'",
        "the fourth blind round's GPT-2 (24-128 of 1024 tokens, H200): 2.04x, the round "
        "author's timing (2 pairs)",
    ),
    Remedy(
        "fused_rnn",
        "the fused recurrent module",
        "a recurrent cell (`nn.LSTMCell`, `nn.GRUCell`, `nn.RNNCell`) called once per time step "
        "in a compiled graph",
        "run the sequence through `nn.LSTM` / `nn.GRU` / `nn.RNN` in one call instead of a "
        "Python loop over the cell",
        "Dynamo runs `nn.LSTM` and its kin eagerly (a graph break around them); a cell whose "
        "step does more than the library's (attention, custom gates) has no fused form",
        "PyTorch forums: why my manual GRU is slower than nn.GRU (cuDNN's fused RNN kernels)",
        "the fourth blind round's LSTM of 32 steps (fp32, H200): 2.42x, the round author's "
        "timing (2 pairs)",
    ),
    Remedy(
        "no_checkpointing",
        "activation checkpointing only where memory needs it",
        "checkpointed regions in a compiled graph: the backward computes their forward again",
        "turn it off where the activations fit: `model.gradient_checkpointing_disable()` "
        "(transformers), or call the blocks directly instead of through "
        "`torch.utils.checkpoint.checkpoint`; where memory is short, checkpoint fewer blocks, "
        "or let the partitioner choose what to recompute "
        "(`torch._functorch.config.activation_memory_budget`)",
        "activation memory grows by what the regions recomputed instead of saving: the "
        "partition view shows what the backward keeps; a batch that no longer fits fails with "
        "out-of-memory",
        "PyTorch docs: torch.utils.checkpoint; Hugging Face docs: gradient checkpointing "
        "(slows training by about 20%)",
    ),
    Remedy(
        "cudnn_benchmark",
        "cuDNN's auto-tuner",
        "convolutions a large share of a GPU step with `torch.backends.cudnn.benchmark` off",
        "set `torch.backends.cudnn.benchmark = True` before the first step",
        "the first step at each new input shape times every candidate algorithm (slower): with "
        "input shapes that change every step it can cost more than it saves; the algorithms "
        "picked may differ from run to run (for bitwise reproducibility keep it off)",
        f"{TUNING_GUIDE}: enable cuDNN auto-tuner",
        "a conv net of 5x5, dilated and grouped convolutions (fp32, H200): 1.25x, the second "
        "blind round author's timing; a torchvision ResNet-50 (fp32, batch 32 at 160 px, H200): "
        "1.01x by compilescope's steps (0.82-1.19) and 1.28x by a stopwatch, 2 pairs: within "
        "noise. Trying it measures your step",
        settings=(Setting("torch.backends.cudnn.benchmark", "set", True),),
    ),
    Remedy(
        "cudnn_enabled",
        "turn cuDNN back on",
        "convolutions on a GPU with `torch.backends.cudnn.enabled = False` (a workaround left "
        "in): torch's own convolution kernels run them, an image at a time",
        "remove `torch.backends.cudnn.enabled = False` (cuDNN is on by default); if it was "
        "there for a crash or for determinism, use `torch.backends.cudnn.deterministic = True` "
        "or `torch.use_deterministic_algorithms(True)` instead",
        "none for speed; the bug it worked around, if any, comes back (re-test it)",
        "PyTorch docs: torch.backends.cudnn; NVIDIA cuDNN developer guide",
        "the fourth blind round's ResNet-18 (H200): 5.73x, the round author's timing (2 pairs)",
        settings=(Setting("torch.backends.cudnn.enabled", "set", True),),
    ),
    Remedy(
        "nondeterministic_kernels",
        "let torch pick its fastest kernels",
        "a GPU step timed with deterministic algorithms asked for "
        "(`torch.use_deterministic_algorithms(True)` or `torch.backends.cudnn.deterministic = "
        "True`): convolutions, scatter/index_add, embedding backward and cumsum take slower, "
        "reproducible kernels",
        "remove `torch.use_deterministic_algorithms(True)` and `torch.backends.cudnn.deterministic "
        "= True` from the training run (keep them for a run that must reproduce bit for bit)",
        "results may differ in the last bits from run to run (floating-point sums in another "
        "order)",
        "PyTorch docs: Reproducibility (torch.use_deterministic_algorithms, cuDNN)",
        "not measured by compilescope: trying it measures your step",
        settings=(Setting("torch.backends.cudnn.deterministic", "set", False),),
    ),
    Remedy(
        "fused_attention_backends",
        "turn attention's fused kernels back on",
        "scaled_dot_product_attention in a compiled graph with every fused backend off (flash, "
        "memory-efficient, cuDNN): it runs as unfused matmuls and a softmax over the whole "
        "score matrix",
        "remove `torch.backends.cuda.enable_flash_sdp(False)` / "
        "`enable_mem_efficient_sdp(False)` or the `with sdpa_kernel(SDPBackend.MATH):` around "
        "the training step, so torch picks flash or memory-efficient attention",
        "none for speed; a fused backend may not support an unusual mask or head size (torch "
        "then falls back by itself)",
        "PyTorch docs: torch.nn.functional.scaled_dot_product_attention, torch.nn.attention."
        "sdpa_kernel",
        "not measured by compilescope: trying it measures your step",
    ),
    Remedy(
        "one_backward",
        "sum the losses and call backward once",
        "a compiled backward that runs several times for each forward: one `.backward()` per "
        "loss, with `retain_graph=True`",
        "add the losses and call backward once: `(loss_a + loss_b).backward()` (weights as "
        "factors: `(w_a * loss_a + w_b * loss_b).backward()`), no `retain_graph=True`; the "
        "gradients are the same sums",
        "none: the gradients of a sum are the sum of the gradients",
        "PyTorch forum: multiple losses, one backward (discuss.pytorch.org/t/126195); autograd "
        "mechanics",
        "the fifth blind round's two-task BERT (H200): 1.65x, the round author's timing (2 pairs)",
    ),
    Remedy(
        "float32_compute",
        "train in float32 (or bf16), not float64",
        "a compiled graph on a GPU whose parameters or inputs are float64",
        "convert the data to float32 once where it is made (`torch.from_numpy(a).float()`, "
        "NumPy's `a.astype(np.float32)`) and the model with `model.float()` (drop "
        "`model.double()`), so TF32 and bf16 autocast apply",
        "float32's 24-bit mantissa instead of float64's 53: enough for training, not for every "
        "scientific computation",
        "PyTorch docs: Automatic Mixed Precision, op eligibility (float64 ops are not autocast)",
        "the fifth blind round's ResNet-18 (H200): 2.47x, the round author's timing (2 pairs)",
    ),
    Remedy(
        "sparse_embedding_grads",
        "sparse gradients for the large embedding tables",
        "embedding tables of many rows trained with dense gradients, few rows looked up a step",
        "build the large tables with `sparse=True` (`nn.Embedding(..., sparse=True)`, "
        "`nn.EmbeddingBag(..., sparse=True)`) and step them with an optimizer that takes "
        "sparse gradients (`SGD`, `SparseAdam`, `Adagrad`), so only the rows looked up are "
        "written and updated; the dense layers keep their own optimizer",
        "AdamW and weight decay do not take sparse gradients (SparseAdam has no weight "
        "decay); a table looked up densely gains little",
        "PyTorch docs: torch.nn.Embedding (sparse), torch.optim.SparseAdam; "
        "facebookresearch/dlrm#15",
        "the fifth blind round's DLRM, 8 tables of 4M rows (H200): 4.92x, the round author's "
        "timing (2 pairs)",
    ),
    Remedy(
        "batched_members",
        "one batched matmul over stacked weights",
        "many same-shaped matmuls on one input, each with its own weight, in a compiled graph "
        "(a Python loop over an ensemble's members or experts)",
        "stack the members' weights and run them together: `params, buffers = "
        "torch.func.stack_module_state(members)` and `torch.vmap(lambda p, b, x: "
        "torch.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(params, "
        "buffers, x)`, or a weight of shape (members, in, out) with `torch.bmm` / `baddbmm`",
        "the members' parameters become slices of stacked tensors (the optimizer steps the stacks)",
        "PyTorch tutorial: Model ensembling (torch.func.stack_module_state, vmap)",
        "the fifth blind round's 32-member MLP ensemble (H200): 7.42x, the round author's "
        "timing (2 pairs)",
    ),
    Remedy(
        "optimizer_weight_decay",
        "the optimizer's weight_decay instead of a penalty in the loss",
        "a norm of every parameter tensor computed in eager code each step, with its backward "
        "(a hand-written L2 penalty added to the loss)",
        "drop the penalty term from the loss and pass it to the optimizer: "
        "`torch.optim.Adam(params, weight_decay=wd, fused=True)` adds `wd * p` to each gradient "
        "inside its fused update (for `l2 = lam * sum(p.pow(2).sum())`, `wd = 2 * lam`); "
        "`AdamW(weight_decay=...)` is the decoupled form most recipes use",
        "Adam's weight_decay is exactly the L2 penalty; AdamW's decoupled decay is not the "
        "same optimisation (retune the factor)",
        "PyTorch docs: torch.optim.Adam (weight_decay); huggingface/transformers#5938",
        "the fifth blind round's ViT-S (H200): 1.54x, the round author's timing (2 pairs)",
    ),
    Remedy(
        "batched_indexing",
        "index whole batches, not one sample at a time",
        "host time in per-sample indexing (`aten::select`) and `aten::stack`: a batch gathered "
        "a sample at a time by a map-style dataset and collated",
        "for tensors already in memory, index the whole batch at once: `idx = "
        "torch.randperm(n, device=x.device)` and `x[idx[i:i + B]]` (slice the tensors), or a "
        "`BatchSampler` passed as `sampler=` with `DataLoader(..., batch_size=None)` and a "
        "dataset whose `__getitem__` (or `__getitems__`) takes a list of indices",
        "none for tensors in memory; a dataset that reads files per sample needs workers "
        "instead (`num_workers`)",
        "pytorch/pytorch#4959 (TensorDataset batches); PyTorch docs: torch.utils.data "
        "(automatic batching, __getitems__)",
        "the fifth blind round's TensorDataset on the GPU (H200): 12.7x, the round author's "
        "timing (2 pairs)",
    ),
    Remedy(
        "bf16_autocast",
        "mixed precision: bf16 autocast",
        "matmuls and convolutions in fp32 taking a large share of a GPU step",
        "run the forward and the loss under `with torch.autocast('cuda', dtype=torch.bfloat16):` "
        "(the backward follows it; the parameters and the optimizer stay fp32, no GradScaler "
        "needed with bf16)",
        "bf16 keeps fp32's range with an 8-bit mantissa: check the loss curve; ops that need "
        "fp32 (softmax, norms, losses) autocast keeps in fp32",
        f"{TUNING_GUIDE}: use mixed precision and AMP; PyTorch docs: torch.amp",
        "not measured by compilescope on its own: trying it measures your step",
    ),
    Remedy(
        "bigger_micro_batch",
        "one bigger micro-batch",
        "a launch-bound GPU step whose whole-model graph runs several times per optimizer step "
        "(gradient accumulation over micro-batches)",
        "run the micro-batches as one: a micro-batch as big as memory allows "
        "(`per_device_train_batch_size` up, `gradient_accumulation_steps` down by the same "
        "factor, so the global batch and the optimisation stay the same)",
        "activation memory grows with the micro-batch: where it no longer fits, accumulate "
        "over fewer, bigger micro-batches",
        "Hugging Face docs: methods and tools for efficient training on a single GPU "
        "(batch size choice, gradient accumulation)",
        "the fourth blind round's Llama (4 micro-batches of 4 against one of 16, H200): 3.44x, "
        "the round author's timing (2 pairs)",
    ),
    Remedy(
        "unplaced_time",
        "time the split could not place",
        "a share of the step that no measured part explains",
        "profile a few steps with torch.profiler (CPU and CUDA activities, with_stack=True) and "
        "look at what runs between the compiled graphs",
        "a profile slows the steps it records",
        "torch.profiler docs",
    ),
)
# Compile-time remedies: what cuts the compile (findings/compile_time.py picks them from the
# compile-time budget).
_COMPILE_ENTRIES = (
    Remedy(
        "regional_compile",
        "compile the repeated block, not the whole model (regional compilation)",
        "a compiled graph made of N copies of one block (a ModuleList of layers)",
        "compile each block instead of the model: `for block in model.{container}: "
        "block.compile()` (the blocks share one compiled graph: Dynamo compiles the block's "
        "code once and reuses it for every copy of the same shapes); or mark the block's "
        "forward with `torch.compiler.nested_compile_region`",
        "code between the blocks (embeddings, the head, the loss) runs eagerly unless "
        "compiled on its own; fusion across block boundaries is lost (usually little)",
        "PyTorch recipe: reducing torch.compile cold start compilation time with regional "
        "compilation",
        "a 12-layer GPT-2 (transformers) training step, H100: first step 36.6-39.0 s -> "
        "16.6-17.2 s (2.2x), a 6-layer one on a CPU 71.1 -> 37.9 s (1.9x); not offered where "
        "blocks differ in shape: a ResNet-50 (16 blocks, 8 shapes) compiled 0.72x as fast",
    ),
    Remedy(
        "default_dynamic",
        "compile with the default dynamic=None",
        "a compile made with `dynamic=True`: every size symbolic from the first call",
        "drop `dynamic=True` (the default, `dynamic=None`, compiles the sizes of the first call "
        "statically and makes a size dynamic only once it changes: one recompile); where one "
        "size is known to vary, `torch._dynamo.mark_dynamic(x, dim)` on it alone",
        "a size that does change costs one recompile before it becomes dynamic",
        "torch.compile docs (dynamic=None: automatic dynamic shapes); pytorch/pytorch#118492",
        "the second compile-time blind round's CNN with static shapes (CPU): 47 -> 25 s of "
        "compile time, the round author's timing",
    ),
    Remedy(
        "compile_loop_body",
        "compile the loop's body once, not the unrolled loop",
        "one module's parameters used many times in one graph: a Python loop over it that "
        "Dynamo unrolled (each iteration traced, fused and compiled again)",
        "mark the body's forward with `@torch.compiler.nested_compile_region` (traced once, "
        "reused for every iteration), or compile `{module}` on its own and keep the loop eager",
        "an eager loop launches each iteration's kernels from Python; nested_compile_region "
        "needs torch >= 2.8",
        "pytorch/pytorch#154652 (fusion time grows with an unrolled GRU); PyTorch recipe: "
        "regional compilation",
    ),
    Remedy(
        "loop_count_in_python",
        "compile one iteration of the loop, and keep the loop in Python",
        "a Python int that sets how many times a loop runs inside the compiled function: Dynamo "
        "unrolls the loop and guards on the int, so each new count compiles a new, longer graph",
        "compile the function that runs one iteration (`step = torch.compile(one_step)`) and "
        "keep `for i in range({count})` outside the compiled code, in Python; pass what changes "
        "from one iteration to the next (a time, a step size) as tensors",
        "each iteration is a call of the compiled step from Python: no fusion across "
        "iterations; passing the count as a tensor instead does not help (`range()` of a tensor "
        "breaks the graph)",
        "pytorch/pytorch#114293 (a recompile per range() end value); torch.compile docs: where "
        "to apply torch.compile",
        "the fourth compile-time blind round's sampler, 4 step counts, CPU: 38.2 s compiling "
        "the whole loop, 12.8 s compiling one step (2.98x, one run each)",
    ),
    Remedy(
        "one_input_dtype",
        "cast the inputs to one dtype before the call",
        "a compiled function called with the same input in several dtypes: Dynamo guards on "
        "each input's dtype and compiles forward and backward again for each (no dynamic "
        "fallback covers a dtype, as it does a size)",
        "cast `{name}` where the batch is made (in the dataset, the collate function, or just "
        "before the call: `{name}.float()`), so every call sees the same dtype; a cast inside "
        "the compiled function comes after the guard and does not help",
        "the cast copies the batch when it changes dtype (the same copy the compiled code made)",
        "pytorch/pytorch#128134 (dtype mismatch recompiles); torch.compile docs: dealing with "
        "recompilations",
        "the fourth compile-time blind round's sensor model, 3 dtypes, CPU: 23.5 s against "
        "15.4 s with every batch cast to float32 (1.53x, one run each)",
    ),
    Remedy(
        "precompute_constants",
        "compute what does not depend on the inputs once, outside forward",
        "most of a graph's operations read none of its inputs: a mask, a bias or a table "
        "rebuilt on every call (often by a Python loop, which Dynamo unrolls into the graph)",
        "build it once in `__init__` and keep it as a buffer "
        "(`self.register_buffer('bias', bias, persistent=False)`), or build it without a Python "
        "loop (`torch.arange`, `torch.tril`, broadcasting): the graph then traces, lowers and "
        "compiles only the model's own work",
        "a buffer is sized once: build it for the longest input and slice it per call",
        "pytorch/pytorch#115626 (an ALiBi mask built in a loop inside a compiled model); "
        "pytorch/pytorch#111441 (Dynamo unrolls loops)",
        "the fourth compile-time blind round's ALiBi decoder, CPU: 45.6 s with the mask built "
        "by a loop in forward (281 operations captured), 25.6 s with it precomputed "
        "(38 operations; 1.78x, one run each)",
    ),
    Remedy(
        "warm_cache",
        "reuse torch's compile caches",
        "a cold compile (torch's FX-graph and AOTAutograd caches missed, or were off) spent "
        "mostly lowering, generating and compiling kernels",
        "run again on this machine: torch keeps compiled graphs in its cache folder "
        "(`TORCHINDUCTOR_CACHE_DIR`, by default under /tmp: keep it across container "
        "restarts); for a new machine or a CI job, save the artifacts after compiling "
        "(`data, info = torch.compiler.save_cache_artifacts()`) and load them before "
        "(`torch.compiler.load_cache_artifacts(data)`)",
        "the cache is keyed on torch's version, the graph, the shapes and Inductor's settings: "
        "a change in any of them compiles again",
        "PyTorch recipe: compile time caching in torch.compile",
        "a 6-layer GPT-2 (transformers), forward and backward, CPU: first step 74.3 s cold, "
        "9.4 s with a warm cache (7.9x, torch 2.13)",
    ),
    Remedy(
        "autotune_cost",
        "autotune less",
        "autotuning (max-autotune's benchmarking of kernel choices) is a large share of the "
        "compile",
        "compile with the default mode where the tuned kernels do not pay (compare the step "
        "times of both); the autotuner's results are cached with the rest",
        "the default kernels may run slower",
        "torch.compile docs: modes; PyTorch tutorial: max-autotune on CPU",
        "a blind-set MLP with freezing on a CPU: 18.8 s with max-autotune, 8.2 s by default, the "
        "same 0.038 s for 50 calls",
    ),
    Remedy(
        "compile_threads",
        "compile kernels in parallel",
        "kernel compilation a large share of a cold compile, with Inductor compiling kernels "
        "on one thread (`compile_threads` 1)",
        "let Inductor compile kernels in parallel worker processes: `TORCHINDUCTOR_COMPILE_THREADS"
        "=<cores>` in the environment before starting Python (torch's default is the number of "
        "cores, up to 32, where the platform allows it)",
        "the workers take memory and CPU while compiling; nothing changes in the kernels",
        "torch.compile docs: Inductor configuration (compile_threads)",
    ),
    Remedy(
        "nothing_to_change",
        "nothing to change",
        "compile time that no catalog remedy cuts (warm already, no repeated blocks, no "
        "recompiles)",
        "nothing: this is what compiling this code costs; it is paid once per process (and "
        "once per machine with the caches)",
        "",
        "compilescope",
    ),
)
REMEDIES: dict[str, Remedy] = {r.key: r for r in (*_ENTRIES, *_COMPILE_ENTRIES)}


def remedy(key: str) -> Remedy:
    """The catalog's remedy by key (KeyError names the known keys)."""
    try:
        return REMEDIES[key]
    except KeyError:
        raise KeyError(f"no remedy {key!r} in the catalog (known: {sorted(REMEDIES)})") from None
