-- reads: rounded
-- The Wilson 95% interval of a proportion p over n (sound at 0 and 1, unlike the normal
-- one), rounded to 4 decimals; NULL when p is NULL (no n).
CREATE OR REPLACE MACRO wilson_low(p, n) AS rounded(
    (p + 1.959964 * 1.959964 / (2 * n)
        - 1.959964 * sqrt(p * (1 - p) / n + 1.959964 * 1.959964 / (4 * n * n)))
    / (1 + 1.959964 * 1.959964 / n), 4);
CREATE OR REPLACE MACRO wilson_high(p, n) AS rounded(
    (p + 1.959964 * 1.959964 / (2 * n)
        + 1.959964 * sqrt(p * (1 - p) / n + 1.959964 * 1.959964 / (4 * n * n)))
    / (1 + 1.959964 * 1.959964 / n), 4);
