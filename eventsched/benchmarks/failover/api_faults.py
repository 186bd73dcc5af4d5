"""api-faults: kube-apiserver's answers replaced by 409/410/429/500 at random for a while,
by a proxy between the one replica and kube-apiserver (faultproxy.py)."""

from __future__ import annotations

import time
from collections import Counter

from eventsched.benchmarks.failover.apiserver_restart import _supervise
from eventsched.benchmarks.failover.faultproxy import FaultProxy
from eventsched.benchmarks.failover.outage import _outage_figures
from eventsched.benchmarks.failover.report import Result
from eventsched.benchmarks.failover.run import Run
from eventsched.benchmarks.failover.scrapes import MASTER, REST, changes, delta


def api_faults(run: Run, result: Result) -> None:
    """The pods arrive at --rate; faults begin once a twentieth is bound. The pods whose
    Binding the proxy answered 409 go to `run.injected_409` (not counted as conflicts)."""
    settings = run.settings
    proxy = FaultProxy(run.cp.url, run.cp.ca_file, share=settings.fault_share, seed=settings.seed)
    proxy.start()
    try:
        kubeconfig = proxy.kubeconfig(run.cp.kubeconfig())
        replica = run.fed_replica(max(1, run.pods // 20), kubeconfig)
        started = run.now()
        proxy.faults_for(settings.fault_seconds)
        time.sleep(settings.fault_seconds)
        ended = run.now()
        _supervise(run, replica, result)
    finally:
        proxy.close()
    _outage_figures(run, replica, result, "faults", started, ended)
    by_code = Counter(f.code for f in proxy.faults)
    bindings = [f for f in proxy.faults if f.binding_of is not None]
    lost = changes(replica.samples, MASTER)
    result.figures.update(
        {
            "requests faulted / forwarded while faulting": (
                f"{len(proxy.faults)} / {proxy.forwarded}"
            ),
            "faults by code": {str(code): by_code[code] for code in sorted(by_code)},
            "Bindings faulted (409 / 429 / 500)": (
                f"{sum(f.code == 409 for f in bindings)} / {sum(f.code == 429 for f in bindings)}"
                f" / {sum(f.code == 500 for f in bindings)}"
            ),
            f"{MASTER} changes": [(round(t, 2), v) for t, v in lost],
        }
    )
    for code in ("409", "410", "429", "500"):
        result.figures[f"{REST}{{code={code!r}}} during"] = delta(
            replica.samples, f"rest:{code}", started, run.now()
        )
    run.injected_409 = [str(f.binding_of) for f in bindings if f.code == 409]
