"""Every sentence and label of the report, one table per language (same keys, same fields).

Templates use ``str.format`` fields; numbers with units arrive pre-formatted as strings.
"""

from __future__ import annotations

from scalewall.errors import SpecError

EN: dict[str, str] = {
    "title": "Cluster decision report: {model}",
    "subtitle": (
        "{model} ({params}), {tokens} training tokens, {batch} tokens per step. Prices are "
        "catalog data with a source and date (scalewall cost --list-prices)."
    ),
    "scenario_source": "Scenario: {source}",
    "sec.verdict": "Verdict",
    "sec.breakeven": "Break-even: total cost to train against model size",
    "breakeven.text": (
        "Total cost to train {tokens} tokens (compute + time, see the verdict) on each option, "
        "for each swept model (a plan search per model and option); log-log axes. An open "
        "marker is a run that ends after the {days}-day target (infeasible; its cost is what "
        "it would spend). The dashed line is the model size from which the larger option is "
        "the cheaper way to meet the target."
    ),
    "efficiency.text": (
        "Per option and size: MFU (model FLOPs over peak FLOP/s), goodput (share of wall time "
        "that trains, after failures, checkpoints and restarts) and the owned cost per million "
        "tokens trained (capex amortised plus opex over MFU x goodput)."
    ),
    "bom.text": (
        "Switches per tier of the network each option needs, and capex by category in "
        "millions of dollars; each bar's total is the option's switch count and capex."
    ),
    "fig.breakeven": "Total cost to train against model size",
    "fig.breakeven_at": "break-even: {params} parameters",
    "fig.params": "model parameters",
    "fig.total_usd": "total cost to train (compute + time, $)",
    "sec.stages": "The four growth stages",
    "stages.text": (
        "Growing {design}: each stage at its size with the numbers of the project's models "
        "(reliability, scheduler simulator, network bill of materials, checkpoint model), the "
        "dominant loss measured there and what to have in place before the next stage."
    ),
    "col.numbers": "numbers",
    "stage.name.bringup": "1. Bring-up (resource pool)",
    "stage.name.governance": "2. Unified scheduling and governance",
    "stage.name.network": "3. Network and data path",
    "stage.name.operations": "4. Industrial operations",
    "stage.bringup": (
        "young-pool failure rates '{rates}': {hw} hardware failures a day over {nodes} nodes; "
        "a {burn} burn-in meets about {found}; {repair} nodes in repair on average, pool "
        "availability {avail}"
    ),
    "stage.governance": (
        "{jobs} jobs from {tenants} tenants with quotas ({sharing} share a GPU as in Alibaba's "
        "openb, {multi} multi-GPU gangs as in Acme) arriving over {span} at {load} of {gpus} "
        "GPUs; after a day's warm-up (fragmented: free capacity stranded on partly used GPUs; "
        "fairness: Jain's index of the tenants' mean slowdown, 1 = equal): {runs}; shortest "
        "waits: {best}"
    ),
    "stage.policy": (
        "{queue} + {placement}: mean wait {wait} (worst tenant {worst}), utilisation {util}, "
        "fragmented {frag}, fairness {jain}"
    ),
    "stage.network": (
        "{tiers} switch tiers ({switches} switches), oversubscription {over}; checkpoint {size} "
        "written at {bw}, stalls {loss} of time ({needed} keeps them under {limit}); data "
        "loading {data} ({bytes} bytes per token)"
    ),
    "stage.operations": (
        "{per_day} interruptions a day; {spares} spare nodes needed at this size (M/M/c repair "
        "queue); {repairs} nodes sent to repair a day, {in_repair} in repair at a time ({repair} "
        "each); a restart takes {restart} ({phases}; longest: {dominant}), {restart_loss} of "
        "time; checkpoint on {storage} written in {write}, restored in {restore}; restarts "
        "{auto}; goodput {goodput}, with: {levers}"
    ),
    "stage.spares_none": "no count suffices (repairs slower than failures)",
    "stage.lever": "{name} {goodput} ({gain})",
    "lever.in_memory": "in-memory checkpoints",
    "lever.spares": "the hot spares (against none)",
    "lever.storage": "10x storage bandwidth",
    "lever.restart": "restarts twice as fast",
    "phase.detection": "detection",
    "phase.draining": "draining",
    "phase.rescheduling": "rescheduling",
    "phase.process_start": "process start",
    "phase.communicator_setup": "communicator set-up",
    "phase.state_load": "state load",
    "phase.warmup": "warm-up",
    "stage.auto_yes": "must be automatic (one a day or more)",
    "stage.auto_no": "can stay manual (fewer than one a day)",
    "stage.loss": "{name}: {frac}",
    "stage_loss.repair": "nodes out for repair (share of the pool)",
    "stage_loss.idle": "idle GPUs under FIFO while jobs wait",
    "stage_loss.fragmentation": "fragmented GPUs under FIFO",
    "sec.summary": "Summary",
    "sec.compare": "Side by side",
    "sec.wall": "The scale wall",
    "sec.efficiency": "MFU, goodput and cost per token against size",
    "sec.losses": "Where each step goes",
    "sec.memory": "Memory of the best plan",
    "sec.failures": "Failures and checkpoints",
    "sec.bom": "Network bill of materials",
    "sec.growth": "Staged growth path",
    "sec.method": "Method",
    "wall.text": (
        "Tokens/s of the best plan at each size (a new plan search per size, log-log axes) "
        "against linear scaling from the sweep's best per-GPU rate (dotted). The knee is the "
        "first size past that best where each added GPU brings less than {threshold} of it; "
        "its cause is the loss that grew most."
    ),
    "knee": (
        "{name}: knee at {gpus} GPUs: each added GPU brings {marginal} of the best per-GPU "
        "rate of the sweep ({best_rate} tokens/s at {best_gpus} GPUs), below {threshold}; "
        "cause: {cause}."
    ),
    "no_knee": (
        "{name}: no knee up to {max_gpus} GPUs: from the best per-GPU rate ({best_rate} "
        "tokens/s at {best_gpus} GPUs) on, each added GPU brings at least {threshold} of it."
    ),
    "memory_bound": (
        "{name}: memory-bound at {sizes} GPUs (the best plan fills over {limit} of HBM or "
        "recomputes every layer): memory limits the plan there."
    ),
    "no_fit": "{name}: no plan fits at {gpus} GPUs.",
    "losses.text": (
        "{name}: wall-clock time at each size split into useful work (MFU x goodput), each "
        "step loss times goodput, and the goodput loss (failures, checkpoints, restarts: 1 - "
        "goodput) on top; every bar adds up to 100% of wall time."
    ),
    "memory.text": "Bytes per GPU on the most loaded pipeline stage; the line is the HBM size.",
    "failures.text": (
        "One job filling each cluster, failure rates '{rates}', checkpoints to '{storage}', "
        "interval at the goodput optimum."
    ),
    "growth.text": (
        "Growing {design} in stages. Dominant: the largest loss at the stage (kernel "
        "efficiency aside). Rising: the loss that grows most on the way to the next stage. "
        "Invest: what to have in place before the next stage."
    ),
    "method.text": (
        "Step time from scalewall's analytic step model with a full parallel-plan search per "
        "size; goodput from the reliability model; cost from the TCO model ({facility} "
        "facility). Scale effects on cost are only those the cited catalog rates give: staff "
        "per GPU and per MW, facility cost per W of IT, and the network bill of materials "
        "growing by switch tier; no volume discount on ports or servers is applied, as no "
        "source in the catalog gives one (scalewall cost --list-prices). Reproduce: {command}"
    ),
    "col.option": "option",
    "col.dimension": "dimension",
    "col.stage": "stage",
    "col.gpus": "GPUs",
    "col.mfu": "MFU",
    "col.goodput": "goodput",
    "col.days": "days to train",
    "col.usd_per_mtok": "$ / M tokens",
    "col.capex": "capex",
    "col.tiers": "switch tiers",
    "col.dominant": "dominant",
    "col.rising": "rising",
    "col.invest": "invest before the next stage",
    "col.mttf": "job MTTF",
    "col.per_day": "interruptions / day",
    "col.expected": "over the run",
    "col.ckpt_size": "checkpoint",
    "col.ckpt_write": "write",
    "col.interval": "interval",
    "col.restart": "restart",
    "col.top_causes": "top causes",
    "col.tier": "tier",
    "col.switches": "switches",
    "col.links": "links",
    "col.medium": "medium",
    "col.transceivers": "transceivers",
    "col.cables": "cables",
    "dim.scale": "Scale",
    "dim.plan": "Best plan",
    "dim.largest_model": "Largest model trained in {days} days",
    "dim.network": "Network",
    "dim.checkpoint": "Checkpoint pressure",
    "dim.failures": "Failure frequency",
    "dim.scheduling": "Scheduling needs",
    "dim.capex": "Capex",
    "dim.opex": "Opex per year",
    "dim.flop_cost": "Cost per effective PFLOP-day",
    "dim.token_cost": "Cost per million tokens (owned / rented)",
    "dim.efficiency": "Efficiency",
    "dim.train": "Train {tokens} tokens",
    "cell.scale": "{gpus} GPUs in {nodes} nodes; {mw} MW IT",
    "cell.largest_model": "{model} ({days} days)",
    "cell.no_model": "none of {models}",
    "cell.network": (
        "{tiers} switch tiers, {switches} switches, {transceivers} transceivers ({fabric})"
    ),
    "cell.checkpoint": "{size} every {interval}, written in {write}; {loss} of time",
    "cell.failures": "{per_day} interruptions a day (job MTTF {mttf}); {expected} over the run",
    "cell.efficiency": (
        "MFU {mfu}, goodput {goodput}; per-GPU rate {scaling} of the sweep's best (at {base} GPUs)"
    ),
    "cell.train": "{days} days, {owned} owned ({rented} rented), {mwh} MWh",
    "verdict.choice": (
        "{name} meets the {days_target}-day target: {tokens} tokens of {model} in {days} days, "
        "total cost {total} ({compute} compute + {time} time)."
    ),
    "verdict.none": (
        "No option meets the {days_target}-day target. The fastest, {name}, needs {days} days "
        "({late} days late); total cost {total} ({compute} compute + {time} time)."
    ),
    "verdict.late_item": "{name} needs {days} days, {late} days past the target",
    "verdict.infeasible": "Infeasible: {items}.",
    "verdict.why": "Why: {reasons}.",
    "verdict.basis": (
        "Total cost = compute (owned cost rate, capex amortised plus opex, over the run's "
        "calendar time) + time ({value} per day of calendar time, {penalty} per day past the "
        "target); set value_of_time_usd_per_day and late_penalty_usd_per_day in the scenario."
    ),
    "why.others_late": "{names} cannot finish by the target date",
    "why.cheaper_compute": (
        "its compute costs {saved} less than {rival}'s: it turns {eff} of its peak FLOP/s "
        "into training (MFU x goodput) against {rival_eff}"
    ),
    "why.time_pays": (
        "it finishes {days} days before {rival}, worth {time_saved} of time, more than its "
        "{extra} of extra compute"
    ),
    "why.none_feasible": "a larger cluster, a smaller model or budget, or a later date is needed",
    "why.compute_more": (
        "{choice}'s compute costs {ratio} more than {name} would spend over its longer run "
        "({usd} against {late_usd}; MFU x goodput {eff} against {late_eff})"
    ),
    "why.compute_less": (
        "{choice}'s compute even costs {ratio} less than {name} would spend over its longer "
        "run ({usd} against {late_usd}; MFU x goodput {eff} against {late_eff})"
    ),
    "be.line": (
        "Break-even: {model_part}. For {model}, {small} stops meeting the date above "
        "{tokens} tokens or for targets under {days} days; with no deadline the faster option "
        "is the cheaper once a day earlier is worth more than {value}."
    ),
    "be.model.cross": (
        "{big} becomes the cheaper way to meet {days} days from about {params} parameters "
        "({between}; {reason})"
    ),
    "be.model.always": (
        "{big} is the cheaper way to meet {days} days at every swept size from {model}"
    ),
    "be.model.never": (
        "{big} is not the cheaper way to meet {days} days at any swept size up to {model}"
    ),
    "be.model.none_feasible": "no option meets {days} days at any swept model size",
    "be.reason.deadline": "the smaller option's run passes the target there",
    "be.reason.cost": "the total costs cross there",
    "be.value_none": "any amount (it is not faster)",
    "dim.feasible": "Meets the {days}-day target",
    "dim.total": "Total cost to train (compute + time)",
    "cell.feasible": "yes: {days} days",
    "cell.infeasible": "no: {days} days, {late} days late",
    "cell.total": "{total} ({compute} + {time})",
    "summary.option": (
        "{name}: {plan}; MFU {mfu}, goodput {goodput}; {tokens} tokens in {days} days; "
        "{usd_mtok} per M tokens; capex {capex}; to train {train_usd}."
    ),
    "summary.growth": "{gpus} GPUs: dominant {dominant}; before {next}: {invest}.",
    "summary.growth_last": "{gpus} GPUs: dominant {dominant}.",
    "summary.written": "Report written to {path}",
    "summary.none": "nothing",
    "fig.wall": "Throughput against cluster size",
    "fig.ideal": "{name}: linear from the best per-GPU rate",
    "fig.knee": "knee: {cause}",
    "fig.band": "{name}: {level} band ({basis})",
    "band.basis.validation": "out-of-sample errors of validation group {group}",
    "band.basis.calibrated": "calibrated",
    "band.too_wide": (
        "{name}: the {level} prediction band ({basis}) is wider than {width} of the prediction "
        "from {gpus} GPUs on: too wide to trust there."
    ),
    "band.within": (
        "{name}: the {level} prediction band ({basis}) stays within {width} of the prediction "
        "up to {max_gpus} GPUs."
    ),
    "band.extrapolated": (
        "{name}: from {gpus} GPUs on, the sizes are larger than every validation run of their "
        "kind: the band there is an extrapolation."
    ),
    "band.inside_runs": (
        "{name}: no size up to {max_gpus} GPUs is larger than every validation run of its kind."
    ),
    "fig.option_point": "{name} (chosen size)",
    "fig.tokens_per_s": "tokens/s",
    "fig.gpus": "GPUs",
    "fig.mfu": "MFU",
    "fig.goodput": "goodput",
    "fig.usd_per_mtok": "$ per million tokens",
    "fig.fraction": "share of wall-clock time",
    "fig.memory": "GiB per GPU",
    "fig.hbm": "HBM",
    "fig.per_day": "interruptions per day",
    "fig.goodput_loss": "share of wall time lost",
    "fig.switches": "switches",
    "fig.capex_musd": "capex (M$)",
    "fig.days": "days to train",
    "fig.capex_by_stage": "capex per stage (M$)",
    "loss.mfu": "useful work (MFU)",
    "loss.compute_efficiency": "kernel efficiency",
    "loss.recompute": "recomputation",
    "loss.tp_comm": "TP communication",
    "loss.cp_comm": "CP communication",
    "loss.ep_comm": "expert all-to-all",
    "loss.moe_imbalance": "expert load imbalance or padding",
    "loss.host_overhead": "host-bound kernel issue",
    "loss.grad_accumulation": "gradient accumulation",
    "loss.offload": "activation offloading",
    "loss.pp_comm": "PP communication",
    "loss.pipeline_bubble": "pipeline bubble",
    "loss.dp_comm": "DP communication",
    "loss.fsdp_comm": "ZeRO-3/FSDP communication",
    "loss.step_sync": "per-step synchronisation",
    "loss.optimizer": "optimizer",
    "loss.straggler": "stragglers",
    "loss.other": "other",
    "loss.goodput": "goodput (failures, checkpoints)",
    "mem.weights": "weights",
    "mem.gradients": "gradients",
    "mem.optimizer_state": "optimizer state",
    "mem.activations": "activations",
    "mem.reserved": "reserved",
    "gp.failed_work": "lost work",
    "gp.checkpoint": "checkpoint stalls",
    "gp.restart": "restarts",
    "gp.planned": "planned maintenance",
    "cap.servers": "servers",
    "cap.network": "network",
    "cap.storage": "storage",
    "cap.facility": "facility",
    "inv.network_tier": "add the {tier} switch tier ({switches} switches, {usd} of network)",
    "inv.network_grow": "grow the switch tiers ({switches} switches, {usd} of network)",
    "inv.scale_up": "{part} grows: keep TP/CP in a larger NVLink domain",
    "inv.scale_out": (
        "{part} grows on the {tier} tier: more scale-out bandwidth, topology-aware placement"
    ),
    "inv.batch": (
        "{part} grows ({per_replica} sequences per replica): a larger global batch or "
        "more virtual stages"
    ),
    "inv.reliability": "goodput falls to {goodput}: reliability first",
    "inv.straggler": "node health checks and straggler detection",
    "inv.memory": "more HBM per GPU (recomputation grows)",
    "inv.software": "{part} grows: software",
    "inv.spares": "{spare_nodes} hot-spare nodes",
    "inv.storage": "checkpoint storage: {loss} of time in stalls; write bandwidth {bw} -> {needed}",
    "inv.restart": (
        "faster restarts: {restart} each costs {loss} of time (warm spares, in-memory restore)"
    ),
    "inv.automation": (
        "scheduler: automatic detection, drain and restart ({per_day} interruptions a day)"
    ),
    "need.gang": "gang-schedule {nodes} nodes",
    "need.auto_restart": "automatic restart ({per_day} a day)",
    "need.restart_rare": "an interruption every {days} days",
    "need.spares": "{spare_nodes} hot spares",
    "need.topology": "topology-aware placement across pods",
    "need.checkpoint_interval": "checkpoint every {interval}",
    "unit.days": "{value} days",
    "unit.hours": "{value} h",
    "unit.minutes": "{value} min",
    "unit.seconds": "{value} s",
    "unit.points": "{value} points",
    "sep": "; ",
}

ZH: dict[str, str] = {
    "title": "集群决策报告：{model}",
    "subtitle": (
        "{model}（{params}），训练 {tokens} 个 token，每步 {batch} 个 token。价格均为带来源和日期的"
        "目录数据（scalewall cost --list-prices）。"
    ),
    "scenario_source": "场景：{source}",
    "sec.verdict": "结论",
    "sec.breakeven": "盈亏平衡：训练总成本随模型规模的变化",
    "breakeven.text": (
        "在各方案上训练 {tokens} 个 token 的总成本（算力 + 时间，见结论），对每个扫描的模型"
        "（每个模型和方案各搜索一次并行方案）；双对数坐标。空心点表示训练结束晚于 {days} 天目标"
        "（不可行；成本为其将花费的金额）。虚线是较大方案成为按期完成的更便宜方案的模型规模。"
    ),
    "efficiency.text": (
        "各方案在各规模下的 MFU（模型 FLOPs 与峰值算力之比）、goodput（扣除故障、检查点和重启后"
        "用于训练的墙钟时间比例）以及每百万训练 token 的自建成本（资本支出摊销加运营支出，除以 "
        "MFU × goodput）。"
    ),
    "bom.text": (
        "各方案所需网络每层的交换机数，以及按类别划分的资本支出（百万美元）；每根柱的总和即该方案"
        "的交换机总数和资本支出。"
    ),
    "fig.breakeven": "训练总成本随模型规模的变化",
    "fig.breakeven_at": "盈亏平衡：{params} 参数",
    "fig.params": "模型参数量",
    "fig.total_usd": "训练总成本（算力 + 时间，美元）",
    "sec.stages": "四个发展阶段",
    "stages.text": (
        "分阶段扩建 {design}：每个阶段在其规模下给出本项目模型（可靠性、调度模拟器、网络物料清单、"
        "检查点模型）的数字、在该阶段测得的主要损失，以及进入下一阶段前需要到位的建设。"
    ),
    "col.numbers": "数字",
    "stage.name.bringup": "1. 上线（资源池）",
    "stage.name.governance": "2. 统一调度与治理",
    "stage.name.network": "3. 网络与数据通路",
    "stage.name.operations": "4. 工业化运维",
    "stage.bringup": (
        "新资源池故障率取 “{rates}”：{nodes} 个节点每天 {hw} 次硬件故障；{burn} 的老化测试约遇到 "
        "{found} 次；平均 {repair} 个节点在维修，资源池可用率 {avail}"
    ),
    "stage.governance": (
        "{tenants} 个有配额的租户共 {jobs} 个作业（{sharing} 按阿里 openb 共享 GPU，{multi} 为按 "
        "Acme 分布的多卡作业），在 {span} 内以 {gpus} 张 GPU 的 {load} 负载到达；一天预热之后"
        "（碎片：困在部分占用 GPU 上的空闲算力；公平性：各租户平均减速比的 Jain 指数，1 为均等）："
        "{runs}；等待最短：{best}"
    ),
    "stage.policy": (
        "{queue} + {placement}：平均等待 {wait}（最差租户 {worst}），利用率 {util}，碎片 {frag}，"
        "公平性 {jain}"
    ),
    "stage.network": (
        "{tiers} 层交换（{switches} 台交换机），收敛比 {over}；检查点 {size}，写入带宽 {bw}，"
        "停顿占时间 {loss}（需 {needed} 才能低于 {limit}）；数据加载 {data}（每 token {bytes} 字节"
        "）"
    ),
    "stage.operations": (
        "每天 {per_day} 次中断；此规模需要 {spares} 个热备节点（M/M/c 维修排队）；每天 {repairs} 个"
        "节点送修，同时约 {in_repair} 个在维修（每次 {repair}）；每次重启 {restart}（{phases}；"
        "最长：{dominant}），占时间 {restart_loss}；检查点存于 {storage}，写入 {write}，"
        "恢复 {restore}；重启{auto}；有效训练率 {goodput}，投入后：{levers}"
    ),
    "stage.spares_none": "任何数量都不够（维修慢于故障）",
    "stage.lever": "{name} {goodput}（{gain}）",
    "lever.in_memory": "内存检查点",
    "lever.spares": "配齐热备（相对无热备）",
    "lever.storage": "存储带宽提高 10 倍",
    "lever.restart": "重启快一倍",
    "phase.detection": "故障检测",
    "phase.draining": "排空",
    "phase.rescheduling": "重新调度",
    "phase.process_start": "进程启动",
    "phase.communicator_setup": "通信器建立",
    "phase.state_load": "状态加载",
    "phase.warmup": "预热",
    "stage.auto_yes": "必须自动化（每天一次或更多）",
    "stage.auto_no": "可以人工处理（每天少于一次）",
    "stage.loss": "{name}：{frac}",
    "stage_loss.repair": "维修中的节点（占资源池比例）",
    "stage_loss.idle": "FIFO 下作业等待时空闲的 GPU",
    "stage_loss.fragmentation": "FIFO 下碎片化的 GPU",
    "sec.summary": "摘要",
    "sec.compare": "方案对比",
    "sec.wall": "扩展墙",
    "sec.efficiency": "MFU、有效训练时间占比（goodput）与每 token 成本随规模的变化",
    "sec.losses": "每一步的时间去向",
    "sec.memory": "最佳方案的显存占用",
    "sec.failures": "故障与检查点",
    "sec.bom": "网络物料清单",
    "sec.growth": "分阶段扩容路径",
    "sec.method": "方法",
    "wall.text": (
        "每个规模下最佳并行方案（每个规模重新搜索，双对数坐标）的 tokens/s，与按扫描中最佳单卡吞吐"
        "线性"
        "外推的理想值（点线）对比。拐点是越过该最佳规模后第一个新增 GPU 带来的"
        "吞吐低于其 {threshold}"
        " "
        "的规模；其原因是增长最多的损失项。"
    ),
    "knee": (
        "{name}：拐点在 {gpus} 卡：每新增一张 GPU 带来的吞吐只有扫描中最佳单卡吞吐（{best_gpus} 卡"
        "时 "
        "{best_rate} tokens/s）的 {marginal}，低于 {threshold}；原因：{cause}。"
    ),
    "no_knee": (
        "{name}：直到 {max_gpus} 卡都没有拐点：从最佳单卡吞吐（{best_gpus} 卡时 {best_rate} "
        "tokens/s）起，每新增一张 GPU 至少带来其 {threshold}。"
    ),
    "memory_bound": (
        "{name}：在 {sizes} 卡时受显存限制（最佳方案占用超过 {limit} 的 HBM 或每层都重计算），"
        "这些规模下显存限制了并行方案。"
    ),
    "no_fit": "{name}：{gpus} 卡时没有可行的并行方案。",
    "losses.text": (
        "{name}：各规模下的墙钟时间分为有效计算（MFU × goodput）、各项步内损失乘以 goodput，以及"
        "顶部的 goodput 损失（故障、检查点、重启：1 − goodput）；每根柱加起来为墙钟时间的 100%。"
    ),
    "memory.text": "负载最重的流水线阶段上每张 GPU 的显存占用；横线为 HBM 容量。",
    "failures.text": (
        "一个作业占满整个集群，故障率取 “{rates}”，检查点写入 “{storage}”，间隔取 goodput 最优值。"
    ),
    "growth.text": (
        "分阶段扩建 {design}。主导瓶颈：该阶段最大的损失项（不计算子效率）。上升项：到"
        "下一阶段增长最多的损失项。"
        "投资：进入下一阶段之前需要到位的建设。"
    ),
    "method.text": (
        "步时来自 scalewall 的解析步时模型，每个规模完整搜索并行方案；goodput 来自可靠性模型；"
        "成本来自总拥有成本模型（{facility} 机房）。成本的规模效应只取目录中有出处的费率：每 GPU "
        "和每 "
        "MW 的人员、每瓦 IT 功率的机房造价，以及随交换层级增长的网络物料清单；端口和服务器没有批量"
        "折扣，"
        "因为目录中没有给出折扣的来源（scalewall cost --list-prices）。复现命令：{command}"
    ),
    "col.option": "方案",
    "col.dimension": "维度",
    "col.stage": "阶段",
    "col.gpus": "GPU 数",
    "col.mfu": "MFU",
    "col.goodput": "goodput",
    "col.days": "训练天数",
    "col.usd_per_mtok": "每百万 token 美元",
    "col.capex": "资本支出",
    "col.tiers": "交换层级",
    "col.dominant": "主导瓶颈",
    "col.rising": "上升项",
    "col.invest": "进入下一阶段前的投资",
    "col.mttf": "作业平均故障间隔",
    "col.per_day": "每日中断次数",
    "col.expected": "整个训练期间",
    "col.ckpt_size": "检查点大小",
    "col.ckpt_write": "写入时间",
    "col.interval": "间隔",
    "col.restart": "重启耗时",
    "col.top_causes": "主要原因",
    "col.tier": "层级",
    "col.switches": "交换机",
    "col.links": "链路",
    "col.medium": "介质",
    "col.transceivers": "光模块",
    "col.cables": "线缆",
    "dim.scale": "规模",
    "dim.plan": "最佳并行方案",
    "dim.largest_model": "{days} 天内能训完的最大模型",
    "dim.network": "网络",
    "dim.checkpoint": "检查点压力",
    "dim.failures": "故障频率",
    "dim.scheduling": "调度需求",
    "dim.capex": "资本支出",
    "dim.opex": "每年运营支出",
    "dim.flop_cost": "每有效 PFLOP-天成本",
    "dim.token_cost": "每百万 token 成本（自建 / 租用）",
    "dim.efficiency": "效率",
    "dim.train": "训练 {tokens} 个 token",
    "cell.scale": "{gpus} 张 GPU，{nodes} 个节点；IT 功率 {mw} MW",
    "cell.largest_model": "{model}（{days} 天）",
    "cell.no_model": "{models} 均不能",
    "cell.network": "{tiers} 层交换，{switches} 台交换机，{transceivers} 个光模块（{fabric}）",
    "cell.checkpoint": "每 {interval} 一次，大小 {size}，写入 {write}；占时间 {loss}",
    "cell.failures": "每天 {per_day} 次中断（作业平均故障间隔 {mttf}）；训练期间共 {expected} 次",
    "cell.efficiency": (
        "MFU {mfu}，goodput {goodput}；单卡吞吐为扫描中最佳值（{base} 卡时）的 {scaling}"
    ),
    "cell.train": "{days} 天，自建 {owned}（租用 {rented}），{mwh} MWh",
    "verdict.choice": (
        "{name} 能满足 {days_target} 天的目标：{model} 训练 {tokens} 个 token 需 {days} 天，"
        "总成本 {total}（算力 {compute} + 时间 {time}）。"
    ),
    "verdict.none": (
        "没有方案能满足 {days_target} 天的目标。最快的 {name} 需要 {days} 天（晚 {late} 天）；"
        "总成本 {total}（算力 {compute} + 时间 {time}）。"
    ),
    "verdict.late_item": "{name} 需要 {days} 天，超出目标 {late} 天",
    "verdict.infeasible": "不可行：{items}。",
    "verdict.why": "原因：{reasons}。",
    "verdict.basis": (
        "总成本 = 算力成本（自建成本速率，即资本支出摊销加运营支出，乘以训练的日历时间）+ 时间成本"
        "（日历时间每天 {value}，超出目标后每天另加 {penalty}）；可在场景中设置 "
        "value_of_time_usd_per_day 和 late_penalty_usd_per_day。"
    ),
    "why.others_late": "{names} 无法在目标日期前完成",
    "why.cheaper_compute": (
        "其算力成本比 {rival} 低 {saved}：它把峰值算力的 {eff} 转化为训练（MFU × goodput），"
        "对比 {rival_eff}"
    ),
    "why.time_pays": (
        "它比 {rival} 早 {days} 天完成，时间价值 {time_saved}，超过其多花的算力成本 {extra}"
    ),
    "why.none_feasible": "需要更大的集群、更小的模型或训练量，或更晚的日期",
    "why.compute_more": (
        "{choice} 的算力成本比 {name} 在更长训练期内的花费高 {ratio}（{usd} 对比 {late_usd}；"
        "MFU × goodput {eff} 对比 {late_eff}）"
    ),
    "why.compute_less": (
        "{choice} 的算力成本甚至比 {name} 在更长训练期内的花费低 {ratio}（{usd} 对比 {late_usd}；"
        "MFU × goodput {eff} 对比 {late_eff}）"
    ),
    "be.line": (
        "盈亏平衡点：{model_part}。对 {model}，训练量超过 {tokens} 个 token 或目标短于 {days} 天时"
        "，"
        "{small} 无法按期完成；若没有截止日期，当提前一天的价值超过 {value} 时更快的方案更便宜。"
    ),
    "be.model.cross": (
        "模型约 {params} 参数起（{between}；{reason}），{big} 成为在 {days} 天内完成的更便宜方案"
    ),
    "be.model.always": "从 {model} 起的所有扫描规模上，{big} 都是在 {days} 天内完成的更便宜方案",
    "be.model.never": "直到 {model} 的所有扫描规模上，{big} 都不是在 {days} 天内完成的更便宜方案",
    "be.model.none_feasible": "没有方案能在任何扫描的模型规模上满足 {days} 天",
    "be.reason.deadline": "较小方案的训练时间在此超过目标",
    "be.reason.cost": "两者总成本在此相交",
    "be.value_none": "任意金额（它并不更快）",
    "dim.feasible": "能否满足 {days} 天目标",
    "dim.total": "训练总成本（算力 + 时间）",
    "cell.feasible": "能：{days} 天",
    "cell.infeasible": "不能：{days} 天，晚 {late} 天",
    "cell.total": "{total}（{compute} + {time}）",
    "summary.option": (
        "{name}：{plan}；MFU {mfu}，goodput {goodput}；{tokens} 个 token 需 {days} 天；"
        "每百万 token {usd_mtok}；资本支出 {capex}；训练成本 {train_usd}。"
    ),
    "summary.growth": "{gpus} 卡：主导瓶颈 {dominant}；进入 {next} 卡之前：{invest}。",
    "summary.growth_last": "{gpus} 卡：主导瓶颈 {dominant}。",
    "summary.written": "报告已写入 {path}",
    "summary.none": "无",
    "fig.wall": "吞吐随集群规模的变化",
    "fig.ideal": "{name}：按最佳单卡吞吐线性外推",
    "fig.knee": "拐点：{cause}",
    "fig.band": "{name}：{level} 预测区间（{basis}）",
    "band.basis.validation": "验证组 {group} 的样本外误差",
    "band.basis.calibrated": "已校准",
    "band.too_wide": (
        "{name}：{level} 预测区间（{basis}）从 {gpus} 卡起宽于预测值的 {width}："
        "在这些规模上过宽，不可信。"
    ),
    "band.within": (
        "{name}：{level} 预测区间（{basis}）直到 {max_gpus} 卡都不超过预测值的 {width}。"
    ),
    "band.extrapolated": ("{name}：从 {gpus} 卡起，规模大于同类的所有验证运行：那里的区间是外推。"),
    "band.inside_runs": "{name}：直到 {max_gpus} 卡，没有规模大于同类的所有验证运行。",
    "fig.option_point": "{name}（选定规模）",
    "fig.tokens_per_s": "tokens/s",
    "fig.gpus": "GPU 数",
    "fig.mfu": "MFU",
    "fig.goodput": "goodput",
    "fig.usd_per_mtok": "每百万 token 美元",
    "fig.fraction": "占墙钟时间比例",
    "fig.memory": "每卡 GiB",
    "fig.hbm": "HBM 容量",
    "fig.per_day": "每日中断次数",
    "fig.goodput_loss": "损失的墙钟时间比例",
    "fig.switches": "交换机数",
    "fig.capex_musd": "资本支出（百万美元）",
    "fig.days": "训练天数",
    "fig.capex_by_stage": "各阶段资本支出（百万美元）",
    "loss.mfu": "有效计算（MFU）",
    "loss.compute_efficiency": "算子效率",
    "loss.recompute": "重计算",
    "loss.tp_comm": "张量并行通信",
    "loss.cp_comm": "上下文并行通信",
    "loss.ep_comm": "专家并行 all-to-all 通信",
    "loss.moe_imbalance": "专家负载不均衡或填充",
    "loss.host_overhead": "CPU 下发算子瓶颈",
    "loss.grad_accumulation": "梯度累加",
    "loss.offload": "激活值卸载到主机内存",
    "loss.pp_comm": "流水线并行通信",
    "loss.pipeline_bubble": "流水线气泡",
    "loss.dp_comm": "数据并行通信",
    "loss.fsdp_comm": "ZeRO-3/FSDP 逐层通信",
    "loss.step_sync": "每步同步",
    "loss.optimizer": "优化器",
    "loss.straggler": "慢节点",
    "loss.other": "其他",
    "loss.goodput": "goodput 损失（故障、检查点）",
    "mem.weights": "权重",
    "mem.gradients": "梯度",
    "mem.optimizer_state": "优化器状态",
    "mem.activations": "激活",
    "mem.reserved": "预留",
    "gp.failed_work": "丢失的计算",
    "gp.checkpoint": "检查点停顿",
    "gp.restart": "重启",
    "gp.planned": "计划维护",
    "cap.servers": "服务器",
    "cap.network": "网络",
    "cap.storage": "存储",
    "cap.facility": "机房设施",
    "inv.network_tier": "增加 {tier} 交换层（{switches} 台交换机，网络投入 {usd}）",
    "inv.network_grow": "扩充现有交换层（{switches} 台交换机，网络投入 {usd}）",
    "inv.scale_up": "{part}上升：把 TP/CP 放进更大的 NVLink 域",
    "inv.scale_out": "{part}在 {tier} 层上升：增加横向扩展带宽，拓扑感知放置",
    "inv.batch": "{part}上升（每个副本 {per_replica} 条序列）：加大全局批量或增加虚拟流水线阶段",
    "inv.reliability": "goodput 降到 {goodput}：优先提升可靠性",
    "inv.straggler": "节点健康检查与慢节点检测",
    "inv.memory": "更大的单卡 HBM（重计算上升）",
    "inv.software": "{part}上升：软件优化",
    "inv.spares": "{spare_nodes} 个热备节点",
    "inv.storage": "检查点存储：停顿占时间 {loss}；写入带宽 {bw} -> {needed}",
    "inv.restart": "更快的重启：每次 {restart}，占时间 {loss}（热备节点、内存中恢复）",
    "inv.automation": "调度器：自动检测、隔离和重启（每天 {per_day} 次中断）",
    "need.gang": "{nodes} 个节点成组调度",
    "need.auto_restart": "自动重启（每天 {per_day} 次）",
    "need.restart_rare": "每 {days} 天一次中断",
    "need.spares": "{spare_nodes} 个热备节点",
    "need.topology": "跨 pod 的拓扑感知放置",
    "need.checkpoint_interval": "每 {interval} 一次检查点",
    "unit.days": "{value} 天",
    "unit.hours": "{value} 小时",
    "unit.minutes": "{value} 分钟",
    "unit.seconds": "{value} 秒",
    "unit.points": "{value} 个百分点",
    "sep": "；",
}

LANGUAGES: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}


def strings(lang: str) -> dict[str, str]:
    """The string table of ``lang`` (``en`` or ``zh``)."""
    if lang not in LANGUAGES:
        raise SpecError("lang", lang, f"valid: {', '.join(LANGUAGES)}")
    return LANGUAGES[lang]
