"""warpfft.torch.distributed: NUFFTs whose points are sharded over processes (one GPU each,
``torch.distributed`` with NCCL, launched by ``torchrun``; one host or many), built on the
public ops (:func:`warpfft.torch.finufft_type1` / ``2`` / ``3``) and torch.distributed's
collectives. No scheduler of ours: torchrun starts the processes, NCCL reduces.

Type 1 is linear in the points: each rank transforms its own points into a full mode array
and the mode arrays are summed over the ranks (one ``all_reduce`` of N1*N2*N3 complex values).
Type 2 reads a mode array replicated on every rank at that rank's points: no communication in
the forward pass. Type 3 shards the sources (partial sums, ``all_reduce``), the targets (each
rank its own targets; the result stays sharded, or is gathered), or both (two process groups,
e.g. the rows and columns of a ``DeviceMesh``).

**Gradients** are those of one global objective: the sum over ranks of what each rank
backpropagates from its *sharded* values, plus terms of *replicated* values counted once (every
rank computes them alike). So a replicated result -- type 1's modes, a gathered type 3 -- takes
the same cotangent on every rank and hands it on unchanged (no communication); a replicated
input -- type 2's modes, type 3's unsharded side -- gets the sum over ranks of its per-rank
cotangents (one ``all_reduce`` in the backward pass). These are JAX's rules for ``psum`` and
varying casts in ``shard_map``, and what makes e.g. the normal operator (type 1 then type 2 at
the same sharded points) differentiate correctly. :func:`sum_over_ranks` and
:func:`replicated` are those two steps, for your own compositions. Every rank must run the
same sequence of these calls (they are collectives).
"""

import torch
import torch.distributed as dist

from .. import torch as _wt  # warpfft.torch, looked up at call time (the tests replace its ops)

__all__ = ["sum_over_ranks", "replicated", "gather_over_ranks", "nufft1_sharded",
           "nufft2_sharded", "nufft3_sharded"]


def _require_initialized():
    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError("warpfft.torch.distributed: torch.distributed is not initialized: "
                           "call torch.distributed.init_process_group('nccl') first (e.g. in "
                           "a script started by torchrun)")


class _SumOverRanks(torch.autograd.Function):
    """psum: forward all_reduce(SUM); the result is replicated, so its cotangent is the same on
    every rank and passes through unchanged."""

    @staticmethod
    def forward(ctx, t, group):
        out = t.clone(memory_format=torch.contiguous_format)
        dist.all_reduce(out, op=dist.ReduceOp.SUM, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class _Replicated(torch.autograd.Function):
    """A replicated tensor entering per-rank work: identity forward; backward sums the per-rank
    cotangents (all_reduce)."""

    @staticmethod
    def forward(ctx, t, group):
        ctx.group = group
        return t.view_as(t)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone(memory_format=torch.contiguous_format)
        dist.all_reduce(grad, op=dist.ReduceOp.SUM, group=ctx.group)
        return grad, None


class _GatherOverRanks(torch.autograd.Function):
    """all_gather along the last axis (sizes may differ per rank); the result is replicated,
    so the backward pass keeps this rank's slice of its cotangent."""

    @staticmethod
    def forward(ctx, t, group):
        t = t.contiguous()
        n = dist.get_world_size(group)
        size = torch.tensor([t.shape[-1]], dtype=torch.int64, device=t.device)
        sizes = [torch.empty_like(size) for _ in range(n)]
        dist.all_gather(sizes, size, group=group)
        sizes = [int(s) for s in sizes]
        big = max(sizes)
        padded = torch.nn.functional.pad(t, (0, big - t.shape[-1])) if t.shape[-1] < big else t
        parts = [torch.empty_like(padded) for _ in range(n)]
        dist.all_gather(parts, padded.contiguous(), group=group)
        rank = dist.get_rank(group)
        ctx.start, ctx.size = sum(sizes[:rank]), sizes[rank]
        return torch.cat([p[..., :s] for p, s in zip(parts, sizes)], dim=-1)

    @staticmethod
    def backward(ctx, grad):
        return grad[..., ctx.start:ctx.start + ctx.size], None


def sum_over_ranks(t, group=None):
    """The sum of `t` over the ranks of `group` (default: all), on every rank; differentiable
    (a replicated result: its cotangent passes through unchanged)."""
    _require_initialized()
    return _SumOverRanks.apply(t, group)


def replicated(t, group=None):
    """`t` itself, marked as replicated over `group` and about to be used by per-rank work: its
    gradient becomes the sum over the ranks of the per-rank gradients (an all_reduce in the
    backward pass; nothing in the forward pass)."""
    _require_initialized()
    return _Replicated.apply(t, group)


def gather_over_ranks(t, group=None):
    """`t` (..., K_rank) of every rank of `group` concatenated in rank order along the last
    axis (K_rank may differ between ranks); differentiable (a replicated result: each rank
    keeps its slice of the cotangent)."""
    _require_initialized()
    return _GatherOverRanks.apply(t, group)


def nufft1_sharded(points, values, output_shape, group=None, **finufftkwargs):
    """Type 1 of this rank's points (D, M_rank) and values (..., M_rank), summed over the ranks
    of `group`: the full mode array (..., *output_shape) on every rank. Keywords as
    :func:`warpfft.torch.finufft_type1`."""
    _require_initialized()
    f = _wt.finufft_type1(points, values, output_shape, **finufftkwargs)
    return _SumOverRanks.apply(f, group)


def nufft2_sharded(points, targets, group=None, **finufftkwargs):
    """Type 2 of a mode array `targets` (..., N1[, N2[, N3]]) replicated on every rank of
    `group` at this rank's points (D, M_rank): returns this rank's (..., M_rank). The modes'
    gradient is summed over the ranks. Keywords as :func:`warpfft.torch.finufft_type2`."""
    _require_initialized()
    return _wt.finufft_type2(points, _Replicated.apply(targets, group), **finufftkwargs)


_BY = ("sources", "targets", "both")


def nufft3_sharded(points, values, targets, by="sources", group=None, targets_group=None,
                   gather=False, **finufftkwargs):
    """Type 3 with sharded sources and/or targets. `by`:

    * ``"sources"``: this rank's sources (points (D, M_rank), values (..., M_rank)), all
      targets (D, K) on every rank of `group`; the partial sums are added over `group`:
      (..., K) on every rank.
    * ``"targets"``: all sources on every rank of `group`, this rank's targets (D, K_rank):
      returns (..., K_rank), or with ``gather=True`` every rank's concatenated in rank order.
    * ``"both"``: sources sharded over `group`, targets over `targets_group` (e.g. the two
      dimensions of a DeviceMesh): (..., K_rank) summed over `group`, gathered over
      `targets_group` with ``gather=True``.

    Keywords as :func:`warpfft.torch.finufft_type3`."""
    if by not in _BY:
        raise ValueError(f"by={by!r}: one of {', '.join(_BY)}")
    if by == "both" and targets_group is None:
        raise ValueError("by='both' needs targets_group (the group the targets are sharded "
                         "over; group is the sources')")
    if by != "both" and targets_group is not None:
        raise ValueError(f"targets_group is for by='both' (by={by!r} uses group)")
    if gather and by == "sources":
        raise ValueError("gather=True is for sharded targets (by='targets' or 'both')")
    _require_initialized()
    by_sources, by_targets = by in ("sources", "both"), by in ("targets", "both")
    tgt_group = group if by == "targets" else targets_group
    if by_sources:  # the targets are replicated over the sources' group
        targets = _Replicated.apply(targets, group)
    if by_targets:  # the sources are replicated over the targets' group
        points = _Replicated.apply(points, tgt_group)
        values = _Replicated.apply(values, tgt_group)
    g = _wt.finufft_type3(points, values, targets, **finufftkwargs)
    if by_sources:
        g = _SumOverRanks.apply(g, group)
    if gather:
        g = _GatherOverRanks.apply(g, tgt_group)
    return g
