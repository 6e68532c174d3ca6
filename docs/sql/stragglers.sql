-- Stragglers: per rank, how many collective instances it certainly arrived last in (its
-- earliest arrival after every other rank's latest), and the lateness bound over those
-- instances. Equals `worksheet import`'s straggler table.
WITH c AS (
  SELECT instance, rank, arrival_lo_ns AS lo, arrival_hi_ns AS hi
  FROM 'collectives.parquet'),
o AS (
  SELECT a.instance, a.rank, a.lo, a.hi, MAX(b.hi) AS other_hi, MAX(b.lo) AS other_lo
  FROM c a JOIN c b ON a.instance = b.instance AND a.rank <> b.rank
  GROUP BY a.instance, a.rank, a.lo, a.hi)
SELECT rank, COUNT(*) AS last,
       MIN(lo - other_hi)::BIGINT AS lateness_lo_ns, MAX(hi - other_lo)::BIGINT AS lateness_hi_ns
FROM o WHERE lo > other_hi
GROUP BY rank ORDER BY last DESC, rank;
