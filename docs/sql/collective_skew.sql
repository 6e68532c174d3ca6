-- Per collective instance: arrival skew (last arrival − first arrival) and the transfer after
-- the last arrival, both bounded, recomputed from the ranks' bounded arrivals (SPEC §10,
-- src/import/ranks/summary.rs):
--   last  L ∈ [max lo, max hi]     first  F ∈ [min lo, min hi]
--   skew      ∈ [max(0, L.lo − F.hi), min(L.hi − F.lo, longest kernel)]
--   transfer  ∈ [max(0, D − L.hi), min(D, D − L.lo)]   D: the reference rank's kernel
-- Both are null (unknown) when a rank's arrival is not bounded, or when the skew bound is as
-- wide as D (the clock bound is too wide to split skew from transfer). Equals the
-- `skew_*` / `transfer_*` columns and `worksheet import`'s collectives table.
WITH c AS (
  SELECT instance, k, rank, arrival_lo_ns AS lo, arrival_hi_ns AS hi,
         end_ns - start_ns AS duration
  FROM 'collectives.parquet'),
i AS (
  SELECT instance, MIN(k) AS k,
         MAX(lo) AS l_lo, MAX(hi) AS l_hi, MIN(lo) AS f_lo, MIN(hi) AS f_hi,
         MAX(duration) AS longest,
         arg_min(duration, rank) AS d,                       -- the reference: lowest rank
         COUNT(*) FILTER (WHERE lo IS NULL OR hi IS NULL) AS unbounded
  FROM c GROUP BY instance),
b AS (
  SELECT *, GREATEST(l_lo - f_hi, 0) AS skew_lo, LEAST(l_hi - f_lo, longest) AS skew_hi
  FROM i),
ok AS (SELECT *, unbounded = 0 AND skew_hi - skew_lo < d AS known FROM b)
SELECT instance,
       CASE WHEN known THEN skew_lo END::BIGINT AS skew_lo_ns,
       CASE WHEN known THEN skew_hi END::BIGINT AS skew_hi_ns,
       CASE WHEN known THEN GREATEST(d - l_hi, 0) END::BIGINT AS transfer_lo_ns,
       CASE WHEN known THEN LEAST(d - l_lo, d) END::BIGINT AS transfer_hi_ns
FROM ok ORDER BY k, instance;
