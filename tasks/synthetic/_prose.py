"""Seeded prose for the demo corpus: templates filled from a topic's vocabulary, never the
same sentence twice in one document, so that extractive methods and embeddings see text that
varies like real writing while every run of `write_corpus` stays byte-identical."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from lilo.tasks.synthetic._topics import Method, Topic
from lilo.tasks.text import count_words

__all__ = ["ProseWriter"]

_ARTICLE_RE = re.compile(r"\b([Aa]) (?=[aeiouAEIOU])")

_GENERAL = (
    "Most {a} approaches to {p} rely on {n}, which {v} {n2} only when data are plentiful.",
    "We argue that {n} and {n2} should be treated jointly rather than as separate choices.",
    "In practice, {n} {v} {n2}, but this interaction is rarely measured directly.",
    "A recurring difficulty is that {n} {v} {n2} in ways that standard diagnostics miss.",
    "The choice of {n} matters most when the task involves {p}.",
    "Earlier {a} models treat {n} as fixed, which leaves {n2} poorly specified.",
    "This view explains why {n} is often tuned by hand in {f}.",
    "When {n} is misspecified, {n2} absorbs the error and the model becomes less {a}.",
    "It is tempting to attribute every gain to {n}, yet {n2} plays an equally large role.",
    "Careful treatment of {n} also makes {p} considerably easier.",
    "The literature on {f} has converged on {a} formulations of {n}.",
    "Few studies report how {n} behaves under {p}, so comparisons remain difficult.",
    "Our analysis separates the effect of {n} from that of {n2}.",
    "Because {n} {v} {n2}, small design changes can have outsized effects.",
    "There is a trade-off between {a} modelling of {n} and the cost of {p}.",
    "From a practical standpoint, {n} is the component practitioners inspect first.",
    "Theory suggests that {n} {v} {n2} whenever the model is {a}.",
    "These observations motivate a more {a} treatment of {n}.",
    "Even a {a} baseline benefits when {n} is estimated with care.",
    "Reported gains in {f} frequently hinge on how {n} is initialised.",
    "The same pattern appears for {n2}, although it is weaker.",
    "Without explicit control of {n}, {p} remains the main failure mode.",
    "We therefore monitor {n} throughout training and evaluation.",
    "Such behaviour is consistent with the view that {n} {v} {n2}.",
    "Seen from this angle, {p} is less a modelling problem than a question of {n}.",
    "We found no setting in which {n} could be ignored safely.",
    "Two factors dominate here: {n} and {n2}.",
    "Whether {n} helps depends strongly on the amount of data available for {p}.",
    "Unlike common practice in {f}, we do not fix {n} in advance.",
    "The interplay of {n} and {n2} is subtle for {a} models.",
    "Diagnostics based on {n} flag most of the failures we observed.",
    "Heuristics for {n} transfer poorly across tasks that involve {p}.",
    "In our experience, {n} is where most {a} pipelines lose accuracy.",
    "One consequence is that {n2} must be revisited whenever {n} changes.",
    "Simple rules of thumb for {n} break down once {p} becomes the bottleneck.",
    "Practitioners rarely report {n}, even though it {v} {n2}.",
    "A {a} view of {n} clarifies several results reported in {f}.",
    "Most of the variance across runs traces back to {n}.",
    "Benchmarks in {f} seldom stress {n} directly.",
    "Handling {n} well turns out to be a prerequisite for {p}.",
    "As the budget grows, {n} matters less and {n2} matters more.",
    "Standard recipes leave {n} implicit, which hides its effect on {p}.",
)

_BY_ROLE: dict[str, tuple[str, ...]] = {
    "intro": (
        "Progress in {f} has been driven by better handling of {n}.",
        "Yet {p} remains an open problem for {a} models.",
        "Practitioners in {f} still face {p} on a daily basis.",
        "This paper introduces {m}, which addresses {p} through {c}.",
        "The central idea of {m} is {c}, combined with {c2}.",
        "We show that {m} improves on {b} without sacrificing {n}.",
        "Our starting point is the observation that {n} {v} {n2}.",
    ),
    "related": (
        "Prior work on {p} introduced {a} variants of {n}.",
        "A second line of research studies {n} in isolation from {n2}.",
        "The baseline {b} remains a strong reference point for {p}.",
        "Several authors extended {b} with {a} components.",
        "Closest to our approach are methods that couple {n} with {n2}.",
        "Unlike {b}, these methods treat {n} as a learned quantity.",
    ),
    "method": (
        "{m} builds on {c}, which {v} {n} explicitly.",
        "The first component of {m} is {c}.",
        "We complement {c} with {c2} to keep {n} under control.",
        "Formally, {m} parameterises {n} so that {n2} stays {a}.",
        "Training proceeds by maximising an objective in which {n} appears explicitly.",
        "The role of {c} is to make {n} {a} without changing {n2}.",
        "At inference time, {m} reuses {c2} to amortise the cost of {p}.",
        "This design keeps {m} close to {b} while adding {c}.",
    ),
    "experiments": (
        "We compare {m} with {b} under identical budgets.",
        "All models share the same preprocessing of {n}.",
        "Hyperparameters of {b} follow the values recommended by its authors.",
        "Each configuration is repeated with five random seeds.",
        "We report the mean over seeds and omit standard deviations below the last digit.",
        "Ablating {c} degrades {m} the most, which confirms its role in {p}.",
        "The gap to {b} widens when {n} is harder to estimate.",
        "Removing {c2} mostly affects {n2}.",
    ),
    "discussion": (
        "The results suggest that {c} is the main source of improvement.",
        "One limitation of {m} is its sensitivity to {n}.",
        "{m} also inherits the weaknesses of {b} regarding {n2}.",
        "Future work could combine {c} with {a} treatments of {n}.",
        "We expect similar gains for other forms of {p}.",
        "A broader evaluation of {n} would strengthen these conclusions.",
    ),
    "conclusion": (
        "We presented {m}, a {a} approach to {p}.",
        "{m} combines {c} with {c2}.",
        "Experiments on four benchmarks show consistent improvements over {b}.",
        "We hope that {m} will make {p} more routine in {f}.",
    ),
}

_FACT_TEMPLATES = (
    "{m} reaches {am} of {value} on the {d} {kind}.",
    "On the {d} {kind}, {m} obtains {am} of {value}.",
    "{m} records {am} of {value} when evaluated on {d}.",
    "With default settings, {m} achieves {am} of {value} on {d}.",
    "Measured on {d}, the {metric} of {m} is {value}.",
    "For the {d} {kind}, {m} attains {am} of {value}.",
)


class ProseWriter:
    """Fills templates for one document; `used` guarantees no sentence repeats."""

    def __init__(self, rng: random.Random, topic: Topic, method: Method, cite_keys: Sequence[str]):
        self.rng = rng
        self.topic = topic
        self.method = method
        self.cite_keys = list(cite_keys)
        self.used: set[str] = set()
        self.uses: dict[str, int] = {}

    def sentence(self, role: str) -> str:
        """A fresh sentence for a section role; retries until it is new to this document."""
        pool = _BY_ROLE.get(role, ()) + _GENERAL
        for _ in range(200):
            # The least-used templates first: spreads the wording like a human would vary it.
            fewest = min(self.uses.get(t, 0) for t in pool)
            template = self.rng.choice([t for t in pool if self.uses.get(t, 0) == fewest])
            text = self._fill(template)
            self.uses[template] = self.uses.get(template, 0) + 1
            if text not in self.used:
                self.used.add(text)
                return text
        raise RuntimeError(f"vocabulary of {self.topic.key} too small for more {role} prose")

    def paragraphs(self, role: str, target_words: int, markup: bool = True) -> list[list[str]]:
        """Paragraphs of 4-7 sentences until `target_words` words of prose are written."""
        out: list[list[str]] = []
        total = 0
        while total < target_words:
            para = [self.sentence(role) for _ in range(self.rng.randint(4, 7))]
            total += sum(count_words(s) for s in para)
            out.append([self._decorate(s) for s in para] if markup else para)
        return out

    def fact(self, index: int, dataset: tuple[str, str], metric: str, value: str) -> str:
        template = _FACT_TEMPLATES[index % len(_FACT_TEMPLATES)]
        name, kind = dataset
        article = "an" if metric[0] in "aeiou" else "a"
        text = template.format(
            m=self.method.name,
            am=f"{article} {metric}",
            metric=metric,
            value=value,
            d=name,
            kind=kind,
        )
        return text[0].upper() + text[1:]

    def _fill(self, template: str) -> str:
        t, r = self.topic, self.rng
        n, n2 = r.sample(t.nouns, 2)
        c, c2 = r.sample(self.method.components, 2)
        text = template.format(
            n=n,
            n2=n2,
            a=r.choice(t.adjectives),
            v=r.choice(t.verbs),
            p=r.choice(t.problems),
            m=self.method.name,
            c=c,
            c2=c2,
            b=r.choice(t.baselines),
            f=t.field,
        )
        text = _ARTICLE_RE.sub(r"\1n ", text)
        return text[0].upper() + text[1:]

    def _decorate(self, sentence: str) -> str:
        """Occasional emphasis and citations, as authors sprinkle them."""
        roll = self.rng.random()
        if roll < 0.08:
            noun = next((n for n in self.topic.nouns if n in sentence), None)
            if noun:
                word = noun.removeprefix("the ")
                sentence = sentence.replace(word, rf"\emph{{{word}}}", 1)
        elif roll < 0.22 and self.cite_keys:
            keys = self.rng.sample(self.cite_keys, self.rng.randint(1, 2))
            command = r"\cite" if len(keys) == 1 else r"\citep"
            sentence = f"{sentence[:-1]}~{command}{{{','.join(keys)}}}."
        return sentence
