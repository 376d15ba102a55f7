"""Vocabulary of the three demo topics: distinct words, so that embeddings and search tell
the topics apart, and shared datasets/metrics inside a topic, so that cross-paper questions
("which method is best on X?") have one right answer."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TOPICS", "Method", "Metric", "Topic"]


@dataclass(frozen=True)
class Metric:
    name: str
    low: float
    high: float
    decimals: int
    unit: str = ""


@dataclass(frozen=True)
class Method:
    name: str
    subtitle: str
    components: tuple[str, ...]


@dataclass(frozen=True)
class Topic:
    key: str
    title: str
    categories: tuple[str, ...]
    field: str
    methods: tuple[Method, ...]
    datasets: tuple[tuple[str, str], ...]  # (name, kind) e.g. ("Mauna-CO2", "series")
    metrics: tuple[Metric, ...]
    baselines: tuple[str, ...]
    nouns: tuple[str, ...]
    adjectives: tuple[str, ...]
    verbs: tuple[str, ...]
    problems: tuple[str, ...]
    equation: str
    macros: tuple[str, ...]
    references: tuple[tuple[str, str, str, int], ...]  # (key, authors, title, year)


GP = Topic(
    key="gp",
    title="Gaussian-process kernels",
    categories=("stat.ML", "cs.LG"),
    field="Gaussian-process regression",
    methods=(
        Method(
            "KernelForge",
            "Grammar-Guided Compositional Kernel Search for Gaussian Processes",
            ("grammar-guided kernel search", "evidence-based pruning", "warm-started optimisation"),
        ),
        Method(
            "SpectraMix",
            "Adaptive Spectral Mixture Kernels with Learned Bandwidths",
            ("an adaptive bandwidth prior", "frequency-domain initialisation", "weight shrinkage"),
        ),
        Method(
            "WarpGP",
            "Input Warping for Non-Stationary Gaussian-Process Regression",
            ("monotone input warping", "a Beta-CDF warping layer", "joint warping inference"),
        ),
        Method(
            "InduceNet",
            "Amortised Inducing-Point Selection for Sparse Gaussian Processes",
            (
                "amortised inducing-point placement",
                "a set encoder",
                "a collapsed variational bound",
            ),
        ),
    ),
    datasets=(
        ("Mauna-CO2", "series"),
        ("Airline-Passengers", "series"),
        ("Concrete-Strength", "benchmark"),
        ("Kin40k", "benchmark"),
    ),
    metrics=(
        Metric("test RMSE", 0.08, 0.65, 3),
        Metric("negative log predictive density", 0.35, 1.9, 2),
    ),
    baselines=("SE-GP", "SVGP", "DKL", "ABCD"),
    nouns=(
        "the marginal likelihood",
        "the kernel hyperparameter vector",
        "the length-scale",
        "the signal variance",
        "the spectral density",
        "the covariance function",
        "the posterior predictive variance",
        "the Cholesky factorisation",
        "inducing-point placement",
        "the noise model",
        "stationarity",
        "the log-determinant term",
        "the kernel grammar",
        "the Gram matrix",
        "the predictive mean",
        "periodic structure",
        "the prior over functions",
        "model evidence",
        "the evidence lower bound",
        "extrapolation behaviour",
        "the length-scale prior",
        "the conjugate-gradient solver",
        "input dimensionality",
        "the Matern family",
        "additive structure",
    ),
    adjectives=(
        "stationary",
        "non-stationary",
        "compositional",
        "sparse",
        "scalable",
        "well-calibrated",
        "periodic",
        "heteroscedastic",
        "Bayesian",
        "interpretable",
        "low-rank",
        "smooth",
        "expressive",
        "data-efficient",
        "kernel-based",
    ),
    verbs=(
        "regularises",
        "constrains",
        "inflates",
        "smooths",
        "shapes",
        "dominates",
        "destabilises",
        "governs",
        "bounds",
        "amplifies",
        "dampens",
        "determines",
        "controls",
        "obscures",
        "reweights",
    ),
    problems=(
        "kernel selection",
        "hyperparameter estimation",
        "long-range extrapolation",
        "scaling to large datasets",
        "uncertainty calibration",
        "modelling non-stationary signals",
        "choosing inducing points",
        "overfitting of the marginal likelihood",
    ),
    equation=r"k(\vx, \vx') = \sigma_f^2 \exp\left(-\frac{\|\vx - \vx'\|^2}{2\ell^2}\right)"
    r" + \sigma_n^2 \delta_{\vx\vx'}",
    macros=(r"\newcommand{\vx}{\mathbf{x}}", r"\newcommand{\GP}{\mathcal{GP}}"),
    references=(
        (
            "rasmussen2006gaussian",
            "Rasmussen, Carl and Williams, Christopher",
            "Gaussian Processes for Machine Learning",
            2006,
        ),
        (
            "duvenaud2013structure",
            "Duvenaud, David and Lloyd, James",
            "Structure Discovery in Nonparametric Regression",
            2013,
        ),
        (
            "wilson2013spectral",
            "Wilson, Andrew and Adams, Ryan",
            "Gaussian Process Kernels for Pattern Discovery and Extrapolation",
            2013,
        ),
        (
            "titsias2009variational",
            "Titsias, Michalis",
            "Variational Learning of Inducing Variables in Sparse Gaussian Processes",
            2009,
        ),
        (
            "snoek2014warping",
            "Snoek, Jasper and Swersky, Kevin",
            "Input Warping for Bayesian Optimization of Non-Stationary Functions",
            2014,
        ),
        (
            "hensman2013big",
            "Hensman, James and Fusi, Nicolo",
            "Gaussian Processes for Big Data",
            2013,
        ),
    ),
)

FLOWS = Topic(
    key="flows",
    title="Neural density estimation",
    categories=("cs.LG", "stat.ML"),
    field="neural density estimation",
    methods=(
        Method(
            "FlowLattice",
            "Lattice-Structured Normalizing Flows for Tabular Density Estimation",
            ("lattice-structured couplings", "a learned permutation schedule", "tail adapters"),
        ),
        Method(
            "MaskedMixer",
            "Masked Autoregressive Mixtures with Shared Conditioners",
            ("shared autoregressive conditioners", "a mixture output head", "mask resampling"),
        ),
        Method(
            "SplineBridge",
            "Monotone Spline Couplings for Stable Density Estimation",
            ("monotone spline couplings", "a bounded-slope parameterisation", "bridge layers"),
        ),
        Method(
            "ScoreDistill",
            "Distilling Score Models into Tractable Density Estimators",
            ("score-to-flow distillation", "a denoising teacher", "likelihood matching"),
        ),
    ),
    datasets=(
        ("Power-UCI", "dataset"),
        ("Gas-Sensor", "dataset"),
        ("MiniBooNE", "dataset"),
        ("BSDS300-Patches", "dataset"),
    ),
    metrics=(
        Metric("average test log-likelihood", 0.3, 14.0, 2, " nats"),
        Metric("training cost", 1.5, 40.0, 1, " GPU hours"),
    ),
    baselines=("RealNVP", "MAF", "NSF", "FFJORD"),
    nouns=(
        "the change-of-variables formula",
        "the Jacobian determinant",
        "the base distribution",
        "the coupling layer",
        "the autoregressive conditioner",
        "the latent space",
        "mode coverage",
        "the log-likelihood",
        "the invertible transform",
        "the rational-quadratic spline",
        "tail behaviour",
        "the masking pattern",
        "the score function",
        "sample quality",
        "the training objective",
        "the permutation layer",
        "the mixture of Gaussians",
        "the density ratio",
        "the inverse pass",
        "numerical stability",
        "dequantisation noise",
        "the data manifold",
        "the normalising constant",
        "out-of-distribution detection",
        "the flow depth",
    ),
    adjectives=(
        "invertible",
        "autoregressive",
        "tractable",
        "multimodal",
        "heavy-tailed",
        "volume-preserving",
        "continuous-time",
        "likelihood-based",
        "monotone",
        "high-dimensional",
        "flow-based",
        "bijective",
        "expressive",
        "normalised",
        "deep",
    ),
    verbs=(
        "distorts",
        "preserves",
        "concentrates",
        "spreads",
        "warps",
        "compresses",
        "inverts",
        "conditions",
        "saturates",
        "stretches",
        "factorises",
        "collapses",
        "calibrates",
        "redistributes",
        "sharpens",
    ),
    problems=(
        "modelling heavy tails",
        "stable inversion",
        "mode collapse",
        "exact likelihood evaluation",
        "sampling speed",
        "density estimation on tabular data",
        "detecting anomalies",
        "scaling flows to high dimensions",
    ),
    equation=r"\log p_X(\vx) = \log p_Z\big(f(\vx)\big)"
    r" + \log \left| \det \frac{\partial f(\vx)}{\partial \vx} \right|",
    macros=(r"\newcommand{\vx}{\mathbf{x}}", r"\newcommand{\vz}{\mathbf{z}}"),
    references=(
        (
            "dinh2017density",
            "Dinh, Laurent and Sohl-Dickstein, Jascha",
            "Density Estimation Using Real NVP",
            2017,
        ),
        (
            "papamakarios2017masked",
            "Papamakarios, George and Pavlakou, Theo",
            "Masked Autoregressive Flow for Density Estimation",
            2017,
        ),
        ("durkan2019neural", "Durkan, Conor and Bekasov, Artur", "Neural Spline Flows", 2019),
        (
            "grathwohl2019ffjord",
            "Grathwohl, Will and Chen, Ricky",
            "Free-Form Continuous Dynamics for Scalable Reversible Generative Models",
            2019,
        ),
        (
            "kingma2018glow",
            "Kingma, Diederik and Dhariwal, Prafulla",
            "Generative Flow with Invertible 1x1 Convolutions",
            2018,
        ),
        (
            "song2021score",
            "Song, Yang and Ermon, Stefano",
            "Score-Based Generative Modeling through Stochastic Differential Equations",
            2021,
        ),
    ),
)

NER = Topic(
    key="ner",
    title="Low-resource named entity recognition",
    categories=("cs.CL",),
    field="low-resource named entity recognition",
    methods=(
        Method(
            "TagBridge",
            "Cross-Lingual Label Projection for Low-Resource Named Entity Recognition",
            ("alignment-based label projection", "projection filtering", "a bilingual lexicon"),
        ),
        Method(
            "ProtoNER",
            "Prototype Networks for Few-Shot Entity Tagging",
            ("the prototype space", "episodic training", "a contrastive span encoder"),
        ),
        Method(
            "GazetteerMix",
            "Gazetteer-Augmented Data Synthesis for Low-Resource NER",
            ("gazetteer-driven mention swapping", "context templates", "a noise-aware loss"),
        ),
        Method(
            "SpanDistil",
            "Span-Level Distillation from Multilingual Teachers",
            ("span-level distillation", "teacher ensembling", "confidence-weighted targets"),
        ),
    ),
    datasets=(
        ("WikiANN-Yoruba", "corpus"),
        ("MasakhaNER-Hausa", "corpus"),
        ("CoNLL-Dutch-1k", "split"),
        ("FewNERD-Inter", "split"),
    ),
    metrics=(
        Metric("entity-level F1", 35.0, 88.0, 1),
        Metric("span precision", 40.0, 92.0, 1),
    ),
    baselines=("mBERT", "XLM-R", "CRF", "BiLSTM-CRF"),
    nouns=(
        "the label projection",
        "the gazetteer",
        "subword tokenisation",
        "the CRF layer",
        "entity boundary detection",
        "the span representation",
        "the annotation budget",
        "cross-lingual transfer",
        "the multilingual encoder",
        "the tag vocabulary",
        "the support set",
        "the prototype space",
        "label noise",
        "the BIO scheme",
        "the teacher model",
        "code-switched text",
        "the word alignment",
        "distant supervision",
        "the entity type inventory",
        "the source language",
        "the target language",
        "morphological variation",
        "the decoding step",
        "nested mention handling",
        "the silver training set",
    ),
    adjectives=(
        "low-resource",
        "multilingual",
        "cross-lingual",
        "few-shot",
        "token-level",
        "span-based",
        "annotated",
        "noisy",
        "morphologically rich",
        "zero-shot",
        "supervised",
        "language-agnostic",
        "typologically diverse",
        "weakly supervised",
        "contextual",
    ),
    verbs=(
        "mislabels",
        "fragments",
        "aligns",
        "transfers",
        "tags",
        "segments",
        "disambiguates",
        "propagates",
        "filters",
        "projects",
        "boosts",
        "corrupts",
        "recovers",
        "covers",
        "delimits",
    ),
    problems=(
        "label scarcity",
        "cross-lingual transfer",
        "boundary detection",
        "noisy projection",
        "few-shot adaptation",
        "tagging rare entity types",
        "tokenisation mismatch",
        "annotation cost",
    ),
    equation=r"P(\vy \mid \vx) = \frac{\exp\left(\sum_{t} \psi(y_{t-1}, y_t, \mathbf{h}_t)"
    r"\right)}{Z(\vx)}",
    macros=(r"\newcommand{\vx}{\mathbf{x}}", r"\newcommand{\vy}{\mathbf{y}}"),
    references=(
        (
            "lample2016neural",
            "Lample, Guillaume and Ballesteros, Miguel",
            "Neural Architectures for Named Entity Recognition",
            2016,
        ),
        (
            "pan2017crosslingual",
            "Pan, Xiaoman and Zhang, Boliang",
            "Cross-lingual Name Tagging and Linking for 282 Languages",
            2017,
        ),
        (
            "adelani2021masakhaner",
            "Adelani, David and Abbott, Jade",
            "MasakhaNER: Named Entity Recognition for African Languages",
            2021,
        ),
        (
            "conneau2020unsupervised",
            "Conneau, Alexis and Khandelwal, Kartikay",
            "Unsupervised Cross-lingual Representation Learning at Scale",
            2020,
        ),
        (
            "ding2021fewnerd",
            "Ding, Ning and Xu, Guangwei",
            "Few-NERD: A Few-shot Named Entity Recognition Dataset",
            2021,
        ),
        (
            "snell2017prototypical",
            "Snell, Jake and Swersky, Kevin",
            "Prototypical Networks for Few-shot Learning",
            2017,
        ),
    ),
)

TOPICS: tuple[Topic, ...] = (GP, FLOWS, NER)
