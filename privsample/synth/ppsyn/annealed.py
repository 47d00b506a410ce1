"""PPSyn-DP's annealed schedule (the default): AIM's budget schedule (:class:`AnnealedSchedule`) over
(clique, partition) options, with JAM's public options when a public table is given.

Privacy (:mod:`privsample.synth.ppsyn`, "annealed" and "Public data", has the whole argument): a round's plan (the
candidates, a data-independent draw among them, the model marginals and the partition options) is a function of the
public state; the selection is the exponential mechanism with sensitivity ``QUALITY_SENSITIVITY[quality]`` times the
largest candidate weight (and 2 c_w for a public option), rho_sel-zCDP; the measurement is a partition's group sums
(L2 sensitivity 1 under add/remove one record), rho_m-zCDP. The schedule's budgets are capped by what is left.
"""

from __future__ import annotations

import itertools
import math
import time
from contextlib import contextmanager

import numpy as np

from privsample.synth import pgm
from privsample.progress import AtMost
from privsample.synth.base import ROUNDS_NOTE
from privsample.synth.partition import PartitionQuery
from privsample.synth.ppsyn.core import PPSynBase
from privsample.synth.ppsyn_steps import (
    QUALITY_SENSITIVITY,
    AnnealedCaches,
    FitState,
    GroupErrors,
    candidate_subset,
    public_options,
    public_path_options,
    random_order,
    selection_gain,
)
from privsample.synth.public import public_scores
from privsample.synth.schedule import AnnealedSchedule
from privsample.synth.model_marginals import ModelMarginals


class AnnealedRounds(PPSynBase):
    """The annealed schedule's rounds (:meth:`_rounds_annealed`)."""

    @contextmanager
    def _phase(self, name: str):
        """Wall time per phase of the annealed rounds (benchmarks/ppsyn_time.py); SynthModel.timings only."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._phase_seconds[name] = self._phase_seconds.get(name, 0.0) + time.perf_counter() - t0

    def _annealed_schedule(self, fs: FitState) -> AnnealedSchedule:
        """AIM's schedule over what this fit was given (rho) less what it spent on initialisation; the accountant's
        spend before the fit (``spent_before``: schema discovery) is already outside rho."""
        spent = fs.accountant.spent - fs.spent_before
        rho_m, rho_sel = self.round_split(fs.rho - spent if spent < fs.rho else 0.0, fs.T)
        return AnnealedSchedule(fs.rho, fs.T, self.alpha, rho_sel, rho_m=rho_m, max_rows=fs.accountant.unit.max_rows)

    def _annealed_plan(self, cache: AnnealedCaches, sched: AnnealedSchedule, fs: FitState, model):
        """The round's public plan: the candidates (size filter, a data-independent draw), their model marginals
        mu and the (clique, partition) options; ``pairs[:n_model]`` are the model paths' options, then the public
        paths'. Public: the model, the schedule, the public table and data-independent randomness only."""
        domain, public = fs.domain, getattr(self, "_public", None)
        with self._phase("size filter"):
            keep = []
            if cache.subsets and self.candidate_refresh < 1:  # a random share of the last subset is kept
                n_keep = round((1 - self.candidate_refresh) * len(cache.small))
                keep = [
                    cache.small[i] for i in itertools.islice(random_order(len(cache.small), fs.spender.noise), n_keep)
                ]
            size_limit = sched.size_limit(fs.accountant, self.max_model_size)
            cache.small = small = candidate_subset(
                domain, model.cliques, fs.candidates, size_limit, self.max_candidates, fs.spender.noise, keep
            )
            if cache.subsets:  # a drawn subset: keep the caches of this round's candidates only (bounded memory)
                cache.keep_only(small)
        with self._phase("model marginals"):
            marg = cache.fitted if cache.fitted is not None else ModelMarginals(model)  # the last refit's, if any
            mu = {cl: marg(cl).reshape(domain.project(cl).shape) for cl in small}
        popts = {}
        with self._phase("partition paths"):
            parts = min(self.max_parts, self.option_parts)
            options = public_options(mu, parts, cache.options, self.option_refresh)  # public
            if public is not None:  # the public partition plan: paths on the public marginals
                new = [cl for cl in small if cl not in cache.pub_counts]
                if new:
                    got = public.engine.marginals(new)
                    cache.pub_counts.update({cl: np.asarray(got[cl], float).reshape(mu[cl].shape) for cl in new})
                popts = public_path_options({cl: cache.pub_counts[cl] for cl in small}, parts, cache.pub_options)
        pairs = [(cl, o) for cl in small for o in options[cl] if o.parts > 1]  # P_0 measures only the total
        n_model = len(pairs)
        if public is not None and pairs:
            pairs += [(cl, o) for cl in small for o in popts[cl]]
        return small, mu, options, popts, pairs, n_model

    def _annealed_select(self, cache, sched, fs, plan, pub_cl, sigma):
        """The exponential mechanism over the round's options (and JAM's public options ``pub_cl``): reads D.
        Returns the index picked (from ``len(pairs)`` on: a public option) and the public shares."""
        small, mu, options, popts, pairs, _ = plan
        weights, public = self._weights, getattr(self, "_public", None)
        with self._phase("selection"):
            if cache.subsets:
                cache.data.update(self._read(fs.engine, [cl for cl in small if cl not in cache.data], "select"))
                x = cache.data
            else:
                x = self._read(fs.engine, small, "select")  # reads D
            if self.quality == "group":  # all options of a clique in one bincount
                gain = []
                for cl in small:
                    gain += [
                        g
                        for g, o in zip(self._group_errors(cache.group_errors, options, cl, x, mu), options[cl])
                        if o.parts > 1
                    ]
                for cl in small if public is not None else ():
                    gain += list(self._group_errors(cache.pub_errors, popts, cl, x, mu)) if popts[cl] else []
            else:
                gain = [selection_gain(x[cl], mu[cl], o, self.quality) for cl, o in pairs]
            noise_err = math.sqrt(2 / math.pi) * sigma
            quality = np.array([weights[cl] * (g - noise_err * o.parts) for g, (cl, o) in zip(gain, pairs)])
            c_max = max(weights[cl] for cl in small)
            delta_q = QUALITY_SENSITIVITY[self.quality] * (c_max or 1.0)
            shares = {}
            if pub_cl:  # JAM's scores, sensitivity 2 c_w: the EM's sensitivity is the max over all options
                shares = {cl: cache.pub_counts[cl].ravel() / public.rows for cl in pub_cl}
                model_err = [float(np.abs(np.ravel(x[cl]) - mu[cl].ravel()).sum()) for cl in pub_cl]
                xs = {cl: x[cl] for cl in pub_cl}
                quality = np.concatenate([quality, public_scores(pub_cl, weights, model_err, xs, shares, fs.total)])
                delta_q = max(delta_q, 2.0 * max(weights[cl] for cl in pub_cl))
            what = {"measured": "clique and partition (private or public)"} if pub_cl else {}
            idx = fs.spender.select(quality, sched.rho_sel, f"select/{sched.t}", sensitivity=delta_q, **what)
        return idx, shares

    @staticmethod
    def _group_errors(cache: dict, options: dict, cl, x, mu):
        """G_w(P) of every option of ``cl`` (:class:`GroupErrors`, rebuilt when the clique's options changed)."""
        ge = cache.get(cl)
        if ge is None or ge.options is not options[cl]:
            ge = cache[cl] = GroupErrors(options[cl])
        return ge(x[cl], mu[cl])

    def _rounds_annealed(self, model, fs: FitState):
        """AIM's budget schedule (:class:`AnnealedSchedule`); the EM picks a (clique, partition) pair
        (:mod:`privsample.synth.ppsyn`, "annealed"). Public data (:mod:`privsample.synth.ppsyn`, "Public data"): a
        public pick adds the public marginal, spends nothing beyond its selection (the schedule counts the
        measurement as spent) and never anneals (AIM's rule compares a private measurement with its noise)."""
        self._phase_seconds = {}
        accountant, domain, progress = fs.accountant, fs.domain, fs.progress
        public = getattr(self, "_public", None)
        sched = self._annealed_schedule(fs)
        cache = AnnealedCaches(subsets=self.max_candidates is not None and len(fs.candidates) > self.max_candidates)
        log = []
        progress("rounds", step=0, steps=AtMost(sched.bound(accountant)), accountant=accountant, message=ROUNDS_NOTE)
        while sched.next_round(accountant):
            t, final, sigma = sched.t, sched.final, sched.sigma
            plan = self._annealed_plan(cache, sched, fs, model)
            small, mu, _, _, pairs, n_model = plan
            if not pairs:  # every candidate has one cell (public: the domain): nothing left to measure
                break
            # JAM's public options: not in the last round (it spends what remains, privately), each clique once
            pub_cl = [] if public is None or final else [cl for cl in small if cl not in cache.measured_public]
            idx, shares = self._annealed_select(cache, sched, fs, plan, pub_cl, sigma)
            source = {} if public is None else {"source": "public" if idx >= len(pairs) else "private"}
            if idx >= len(pairs):  # a public pick: the public marginal, weighed as a private one of this round
                cl = pub_cl[idx - len(pairs)]
                fs.measurements.append(pgm.LinearMeasurement(fs.total * shares[cl], cl, stddev=sigma))
                cache.measured_public.add(cl)
                sched.skip_measurement()
                model = self._refit(domain, model, fs.measurements, fs.total, False)
                cache.fitted = ModelMarginals(model)
                steps = AtMost(sched.bound(accountant))
                parts = int(domain.size(cl))
                self._log(log, progress, accountant, t, cl, parts, 0.0, sigma, domain, steps, final=False, **source)
                continue
            cl, opt = pairs[idx]
            if public is not None:
                source["path"] = "model" if idx < n_model else "public"
            rho_m = sched.measure_rho(accountant)  # the last round spends exactly what is left
            labels, parts, y, sigma = self._measure_partition(
                fs.engine, fs.spender, cl, opt.labels, opt.parts, rho_m, t
            )
            fs.measurements.append(pgm.LinearMeasurement(y, cl, stddev=sigma, query=PartitionQuery(labels, parts)))
            if final:  # the rounds are over: the final refit is a phase of its own
                self._log(log, progress, accountant, t, cl, parts, rho_m, sigma, domain, t, final=True, **source)
                model = self._refit(domain, model, fs.measurements, fs.total, True, progress, accountant)
                break
            model = self._refit(domain, model, fs.measurements, fs.total, False)  # timed in SynthModel.timings
            cache.fitted = ModelMarginals(model)  # the next round's model marginals too
            moved = float(np.abs(cache.fitted(cl) - mu[cl].ravel()).sum())
            # public diagnostics only (the model and sigma); the selection scores read the data and stay out
            extra = dict(final=False, moved=moved, expected_noise=sched.expected_noise(parts), **source)
            sched.anneal(moved, parts)  # sigma / 2, eps_sel * 2
            steps = AtMost(sched.bound(accountant))
            self._log(log, progress, accountant, t, cl, parts, rho_m, sigma, domain, steps, **extra)
        return model, log
