"""Pipeline schedules: the bubble and the point-to-point traffic of one step, by named schedule.

A step of a pipeline stage is m micro-batches of forward + backward. With the slowest stage
taking ``t_max`` per micro-batch and all stages together ``t_sum``:

- ``1f1b`` (PipeDream-Flush / Megatron's non-interleaved schedule) takes
  ``m t_max + (t_sum - t_max)``: the fill and drain add one pass of the other stages (Narayanan
  et al. SC'21, Sec. 2.2.1: bubble (p - 1)/m of equal stages);
- ``interleaved-1f1b`` with v model chunks per rank divides the bubble by v (Sec. 2.2.2);
- ``dualpipe`` (DeepSeek-V3 report Sec. 3.2.1, Table 2) runs micro-batches from both ends,
  bubble (pp/2 - 1)(F&B + B - 3W) instead of 1F1B's (pp - 1)(F + B): about (pp/2 - 1)/(pp - 1)
  of it.

A stack that accumulates gradients outside the schedule (torch.distributed.pipelining's
torchtitan and NeMo AutoModel) runs one schedule per local batch, and pays the fill and drain
that many times a step (``schedule_runs``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from scalewall.catalog.schema import ModelSpec
from scalewall.perf import collectives as coll
from scalewall.perf.assumptions import Efficiency, Stack
from scalewall.perf.batch import PlanBatch
from scalewall.perf.compute import ACT_BYTES
from scalewall.plan.topology import Cluster

FloatArray = NDArray[np.float64]


def bubble_s(
    stack: Stack, pp: FloatArray, vpp: FloatArray, t_sum: FloatArray, t_max: FloatArray
) -> FloatArray:
    """Idle time per step of the critical stage: ``(t_sum - t_max) / vpp`` for (interleaved)
    1F1B, scaled by (pp/2 - 1)/(pp - 1) under DualPipe."""
    bubble: FloatArray = (t_sum - t_max) / vpp
    if stack.dualpipe:
        bubble = bubble * np.maximum(pp / 2.0 - 1.0, 0.0) / np.maximum(pp - 1.0, 1.0)
    return bubble


def schedule_runs(p: PlanBatch, stack: Stack) -> FloatArray:
    """Pipeline schedules a step runs, each with its own fill and drain: global_batch / (dp x
    local_batch) where the stack accumulates gradients outside the schedule
    (``Stack.pipeline_schedule_per_local_batch``) and the plan states a ``local_batch``; else 1
    (every micro-batch of the step in one schedule)."""
    one = np.ones_like(p.pp)
    if not stack.pipeline_schedule_per_local_batch:
        return one
    per_replica = p.global_batch / p.dp
    runs: FloatArray = np.where(
        p.local_batch > 0, per_replica / np.maximum(p.local_batch, 1.0), one
    )
    return runs


def p2p_s(
    model: ModelSpec,
    cluster: Cluster,
    p: PlanBatch,
    eff: Efficiency,
    stack: Stack,
    micro_batches: FloatArray,
) -> FloatArray:
    """Exposed pipeline point-to-point time per step: per micro-batch and model chunk, the
    activations forward and their gradients backward to the neighbour stage, tp cp dp ranks
    away; 1/tp shards all-gathered over the scale-up fabric where the stack scatters them
    (Megatron's ``scatter_gather_tensors_in_pipeline``), ``Stack.pp_p2p_transfers_per_micro_batch``
    times per micro-batch and chunk. The stack's overlap hides ``pp_p2p_overlap_frac`` of the
    transfer; the handshake ``pp_p2p_sync_s`` always shows."""
    if not (p.pp > 1).any():
        return np.zeros_like(p.pp)  # no pipeline in the batch: every row would be masked to 0
    tokens = p.micro_batch * p.seq_len / p.cp
    message = tokens * model.hidden * ACT_BYTES / np.where(stack.scatter_gather_p2p, p.tp, 1.0)
    transfer = coll.p2p_time_s(cluster, eff, p.tp * p.cp * p.dp, message)
    exposed = 1.0 - (eff.pipeline.pp_p2p_overlap_frac if stack.overlap_p2p else 0.0)
    result: FloatArray = np.where(
        p.pp > 1,
        micro_batches
        * stack.pp_p2p_transfers_per_micro_batch
        * p.vpp
        * (transfer * exposed + eff.pipeline.pp_p2p_sync_s),
        0.0,
    )
    return result


def tied_embedding_sync_s(
    model: ModelSpec, cluster: Cluster, p: PlanBatch, eff: Efficiency, stack: Stack
) -> FloatArray:
    """Exposed all-reduce per step of the tied word-embedding gradients between the first
    stage (input embedding) and the last (output layer), which hold the same vocab x hidden / tp
    weights: Megatron's ``_allreduce_word_embedding_grads`` (``finalize_model_grads``) and
    DeepSpeed's ``allreduce_tied_weight_gradients`` run it after the backward, outside the
    data-parallel overlap, over the two ranks (pp - 1) tp cp dp apart, in the gradient
    buffer's dtype (``Stack.grad_reduce_bytes``). Zero without a pipeline or untied weights."""
    if not model.tied_embeddings or not (p.pp > 1).any():
        return np.zeros_like(p.pp)
    message = model.vocab * model.hidden / p.tp * stack.grad_reduce_bytes
    two = np.full_like(p.pp, 2.0)
    stride = np.maximum(p.pp - 1.0, 1.0) * p.tp * p.cp * p.dp
    sync = coll.allreduce_time_s(cluster, eff, two, stride, message)
    result: FloatArray = np.where(p.pp > 1, sync, 0.0)
    return result


__all__ = ["bubble_s", "p2p_s", "schedule_runs", "tied_embedding_sync_s"]
