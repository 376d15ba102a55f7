"""Compiled bibliographies in the shapes arXiv sources ship: key, authors, title, venue, year,
arXiv id, DOI and URL from each entry."""

from __future__ import annotations

from pathlib import Path

from lilo.tasks.samples.bbl import parse_bbl
from lilo.tasks.samples.references import read_bibliography

PLAINNAT = r"""\begin{thebibliography}{3}
\providecommand{\natexlab}[1]{#1}
\providecommand{\url}[1]{\texttt{#1}}
\expandafter\ifx\csname urlstyle\endcsname\relax
  \providecommand{\doi}[1]{doi: #1}\else
  \providecommand{\doi}{doi: \begingroup \urlstyle{rm}\Url}\fi

\bibitem[Vaswani et~al.(2017)Vaswani, Shazeer, Parmar, Uszkoreit, Jones, Gomez,
  Kaiser, and Polosukhin]{vaswani2017attention}
Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob Uszkoreit, Llion Jones,
  Aidan~N Gomez, {\L}ukasz Kaiser, and Illia Polosukhin.
\newblock Attention is all you need.
\newblock In \emph{Advances in Neural Information Processing Systems}, pages
  5998--6008, 2017.

\bibitem[Cowles \& Carlin(1996)Cowles and Carlin]{CowlesCarlin96}
Cowles, Mary~K. and Carlin, Bradley~P.
\newblock Markov chain monte carlo convergence diagnostics: A comparative
  review.
\newblock \emph{Journal of the American Statistical Association}, 91\penalty0
  (434):\penalty0 883--904, 1996.
\newblock \doi{10.2307/2291683}.
\newblock URL \url{http://dx.doi.org/10.2307/2291683}.

\bibitem[Hu et~al.(2021{\natexlab{a}})Hu, Shen, Wallis, Allen-Zhu, Li, Wang,
  Wang, and Chen]{hu2021lora}
Edward~J. Hu, Yelong Shen, Phillip Wallis, Zeyuan Allen-Zhu, Yuanzhi Li, Shean
  Wang, Lu~Wang, and Weizhu Chen.
\newblock {LoRA}: Low-rank adaptation of large language models.
\newblock \emph{ArXiv}, abs/2106.09685, 2021{\natexlab{a}}.

\end{thebibliography}
"""

ACL = r"""\begin{thebibliography}{2}
\expandafter\ifx\csname natexlab\endcsname\relax\def\natexlab#1{#1}\fi

\bibitem[{Devlin et~al.(2019)Devlin, Chang, Lee, and Toutanova}]{devlin-etal-2019-bert}
Jacob Devlin, Ming-Wei Chang, Kenton Lee, and Kristina Toutanova. 2019.
\newblock \href{https://doi.org/10.18653/v1/N19-1423}{{BERT}: Pre-training of
  deep bidirectional transformers for language understanding}.
\newblock In \emph{Proceedings of the 2019 Conference of the North {A}merican
  Chapter of the Association for Computational Linguistics}, pages 4171--4186,
  Minneapolis, Minnesota. Association for Computational Linguistics.

\bibitem[{Liu et~al.(2023)Liu, Lin, Hewitt, Paranjape, Bevilacqua, Petroni, and
  Liang}]{liu2023lost}
Nelson~F. Liu, Kevin Lin, John Hewitt, Ashwin Paranjape, Michele Bevilacqua,
  Fabio Petroni, and Percy Liang. 2023.
\newblock \href{https://arxiv.org/abs/2307.03172}{Lost in the middle: How
  language models use long contexts}.
\newblock \emph{arXiv preprint arXiv:2307.03172}.

\end{thebibliography}
"""

PLAIN_UNSRT = r"""\begin{thebibliography}{10}

\bibitem{rasmussen2006}
Carl~Edward Rasmussen and Christopher K.~I. Williams.
\newblock {\em Gaussian Processes for Machine Learning}.
\newblock MIT Press, 2006.

\bibitem{he2016}
Kaiming He, Xiangyu Zhang, Shaoqing Ren, and Jian Sun.
\newblock Deep residual learning for image recognition.
\newblock {\em CoRR}, abs/1512.03385, 2015.

\end{thebibliography}
"""

IEEE = r"""\begin{thebibliography}{1}
\providecommand{\url}[1]{#1}
\csname url@samestyle\endcsname

\bibitem{b1}
A.~Vaswani \emph{et~al.}, ``Attention is all you need,'' in \emph{Proc. NeurIPS},
  2017, pp. 5998--6008.

\bibitem{b2}
D.~P. Kingma and J.~Ba, ``{Adam}: A method for stochastic optimization,''
  \emph{arXiv preprint arXiv:1412.6980}, 2014.

\bibitem{b3}
K.~He, X.~Zhang, S.~Ren, and J.~Sun, ``Deep residual learning for image
  recognition,'' in {\em CVPR}, 2016. [Online]. Available:
  \url{https://doi.org/10.1109/CVPR.2016.90}

\end{thebibliography}
"""

AAS = r"""\begin{thebibliography}{}
\expandafter\ifx\csname natexlab\endcsname\relax\def\natexlab#1{#1}\fi

\bibitem[{{Foreman-Mackey} {et~al.}(2017){Foreman-Mackey}, {Agol}, {Ambikasaran},
  \& {Angus}}]{celerite}
{Foreman-Mackey}, D., {Agol}, E., {Ambikasaran}, S., \& {Angus}, R. 2017, \aj,
  154, 220, \dodoi{10.3847/1538-3881/aa9332}

\end{thebibliography}
"""

REVTEX = r"""\begin{thebibliography}{1}
\bibitem [{\citenamefont {Kingma}\ and\ \citenamefont {Welling}(2014)}]{kingma}%
  \BibitemOpen
  \bibfield  {author} {\bibinfo {author} {\bibfnamefont {D.~P.}\ \bibnamefont
  {Kingma}}\ and\ \bibinfo {author} {\bibfnamefont {M.}~\bibnamefont {Welling}},\
  }\href@noop {} {\bibinfo {title} {Auto-encoding variational {B}ayes}} (\bibinfo
  {year} {2014}),\ \Eprint {https://arxiv.org/abs/1312.6114} {arXiv:1312.6114}
  \BibitemShut {NoStop}%
\end{thebibliography}
"""

BIBLATEX = r"""
\begingroup
\makeatletter
\@ifundefined{ver@biblatex.sty}
  {\@latex@error{Missing 'biblatex' package}{}}
  {}
\refsection{0}
  \datalist[entry]{nyt/global//global/global}
    \entry{flows2015}{inproceedings}{}
      \name{author}{2}{}{%
        {{un=0,uniquepart=base,hash=a1}{%
           family={Rezende},
           familyi={R\bibinitperiod},
           given={Danilo\bibnamedelima Jimenez},
           giveni={D\bibinitperiod\bibinitdelim J\bibinitperiod},
        }}%
        {{un=0,uniquepart=base,hash=b2}{%
           family={Mohamed},
           familyi={M\bibinitperiod},
           given={Shakir},
           giveni={S\bibinitperiod},
        }}%
      }
      \strng{namehash}{ab12}
      \field{sortinit}{R}
      \field{booktitle}{Proceedings of the 32nd International Conference on Machine Learning}
      \field{eprinttype}{arXiv}
      \field{title}{Variational Inference with Normalizing Flows}
      \field{year}{2015}
      \verb{eprint}
      \verb 1505.05770
      \endverb
      \verb{urlraw}
      \verb https://proceedings.mlr.press/v37/rezende15.html
      \endverb
      \verb{url}
      \verb https://proceedings.mlr.press/v37/rezende15.html
      \endverb
    \endentry
    \entry{old}{article}{}
      \name{author}{1}{}{%
        {{hash=c3}{Papamakarios}{P\bibinitperiod}{George}{G\bibinitperiod}{}{}{}{}}%
      }
      \field{journaltitle}{JMLR}
      \field{title}{Normalizing Flows for Probabilistic Modeling and Inference}
      \field{year}{2021}
      \verb{doi}
      \verb 10.48550/arXiv.1912.02762
      \endverb
    \endentry
  \enddatalist
\endrefsection
\endgroup
"""


def _fields(text: str) -> list[tuple[str, ...]]:
    return [(e.key, e.title, e.venue, e.year, e.doi, e.url) for e in parse_bbl(text)]


def test_natbib_plainnat() -> None:
    entries = parse_bbl(PLAINNAT)
    assert _fields(PLAINNAT) == [
        (
            "vaswani2017attention",
            "Attention is all you need",
            "Advances in Neural Information Processing Systems",
            "2017",
            "",
            "",
        ),
        (
            "CowlesCarlin96",
            "Markov chain monte carlo convergence diagnostics: A comparative review",
            "Journal of the American Statistical Association",
            "1996",
            "10.2307/2291683",
            "",
        ),
        (
            "hu2021lora",
            "LoRA: Low-rank adaptation of large language models",
            "ArXiv",
            "2021",
            "",
            "",
        ),
    ]
    assert entries[0].authors[-2:] == ("Łukasz Kaiser", "Illia Polosukhin")
    assert len(entries[0].authors) == 8
    assert entries[1].authors == ("Cowles, Mary K.", "Carlin, Bradley P.")


def test_acl_natbib() -> None:
    entries = parse_bbl(ACL)
    assert _fields(ACL) == [
        (
            "devlin-etal-2019-bert",
            "BERT: Pre-training of deep bidirectional transformers for language understanding",
            "Proceedings of the 2019 Conference of the North American Chapter of the "
            "Association for Computational Linguistics",
            "2019",
            "10.18653/v1/N19-1423",
            "",
        ),
        (
            "liu2023lost",
            "Lost in the middle: How language models use long contexts",
            "arXiv preprint arXiv:2307.03172",
            "2023",
            "",
            "https://arxiv.org/abs/2307.03172",
        ),
    ]
    assert entries[0].authors == (
        "Jacob Devlin",
        "Ming-Wei Chang",
        "Kenton Lee",
        "Kristina Toutanova",
    )


def test_plain_and_unsrt() -> None:
    assert _fields(PLAIN_UNSRT) == [
        ("rasmussen2006", "Gaussian Processes for Machine Learning", "MIT Press", "2006", "", ""),
        ("he2016", "Deep residual learning for image recognition", "CoRR", "2015", "", ""),
    ]
    assert parse_bbl(PLAIN_UNSRT)[0].authors == (
        "Carl Edward Rasmussen",
        "Christopher K. I. Williams",
    )


def test_ieeetr_and_ieeetran_quote_the_title() -> None:
    entries = parse_bbl(IEEE)
    assert _fields(IEEE) == [
        ("b1", "Attention is all you need", "Proc. NeurIPS", "2017", "", ""),
        (
            "b2",
            "Adam: A method for stochastic optimization",
            "arXiv preprint arXiv:1412.6980",
            "2014",
            "",
            "",
        ),
        (
            "b3",
            "Deep residual learning for image recognition",
            "CVPR",
            "2016",
            "10.1109/CVPR.2016.90",
            "",
        ),
    ]
    assert entries[1].authors == ("D. P. Kingma", "J. Ba")


def test_aas_style_has_no_title_but_keeps_the_rest() -> None:
    (entry,) = parse_bbl(AAS)
    assert (entry.key, entry.title, entry.year, entry.doi) == (
        "celerite",
        "",
        "2017",
        "10.3847/1538-3881/aa9332",
    )
    assert entry.authors == ("Foreman-Mackey, D.", "Agol, E.", "Ambikasaran, S.", "Angus, R.")


def test_revtex_bibinfo_fields() -> None:
    (entry,) = parse_bbl(REVTEX)
    assert (entry.key, entry.title, entry.year) == (
        "kingma",
        "Auto-encoding variational Bayes",
        "2014",
    )
    assert "arXiv:1312.6114" in entry.text


def test_biblatex_bbl_both_name_formats() -> None:
    flows, old = parse_bbl(BIBLATEX)
    assert (flows.key, flows.title, flows.year, flows.eprint, flows.eprinttype) == (
        "flows2015",
        "Variational Inference with Normalizing Flows",
        "2015",
        "1505.05770",
        "arXiv",
    )
    assert flows.authors == ("Rezende, Danilo Jimenez", "Mohamed, Shakir")
    assert flows.venue == "Proceedings of the 32nd International Conference on Machine Learning"
    assert flows.url == "https://proceedings.mlr.press/v37/rezende15.html"
    assert (old.authors, old.venue, old.doi) == (
        ("Papamakarios, George",),
        "JMLR",
        "10.48550/arXiv.1912.02762",
    )


def test_a_bbl_only_survey_resolves_ids_and_keeps_titles(tmp_path: Path) -> None:
    """The source names `refs.bib` but ships only `main.bbl` (arXiv's usual upload): every
    entry keeps its title, and ids come from wherever the entry marks one."""
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\cite{vaswani2017attention}\n"
        "\\bibliographystyle{plainnat}\n\\bibliography{refs}\n\\end{document}\n"
    )
    acl_items = ACL.split("\\fi\n", 1)[1]
    (tmp_path / "main.bbl").write_text(PLAINNAT.split("\\end{thebibliography}")[0] + acl_items)
    bibliography = read_bibliography(tmp_path, "main.tex")
    rows = [(r.key, r.arxiv_id, r.how, bool(r.title)) for r in bibliography.references]
    assert rows == [
        ("vaswani2017attention", None, "unresolved", True),
        ("CowlesCarlin96", None, "unresolved", True),
        ("hu2021lora", "2106.09685", "bbl", True),
        ("devlin-etal-2019-bert", None, "unresolved", True),
        ("liu2023lost", "2307.03172", "bbl", True),
    ]
    assert bibliography.files == ("main.bbl",)


def test_biblatex_bbl_ids_resolve(tmp_path: Path) -> None:
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\usepackage{biblatex}\n\\addbibresource{lib.bib}\n"
        "\\begin{document}\nx\n\\end{document}\n"
    )
    (tmp_path / "main.bbl").write_text(BIBLATEX)
    refs = read_bibliography(tmp_path, "main.tex").references
    assert [(r.key, r.arxiv_id, r.how) for r in refs] == [
        ("flows2015", "1505.05770", "bbl"),
        ("old", "1912.02762", "bbl"),
    ]
