-- Per collective instance: arrival skew (last arrival − first arrival) and the transfer after
-- the last arrival, both bounded, recomputed from the ranks' rows (docs/ranks.md,
-- src/import/ranks/arrivals.rs). Each rank's delay over the first arrival is bounded by the
-- pairs' arrival bounds (the clock relations' bound intersected with the clock-free
-- [−dur_b, +dur_a]); then
--   skew      ∈ [max_r delay_lo, max_r delay_hi]
--   transfer  = the reference rank's (the lowest rank's) transfer after the last arrival
-- Both are null (unknown) when the ranks' delays are (conflicting clock evidence). Equals the
-- `skew_*` / `transfer_*` columns and `worksheet import`'s collectives table.
SELECT instance,
       MAX(delay_lo_ns)::BIGINT AS skew_lo_ns,
       MAX(delay_hi_ns)::BIGINT AS skew_hi_ns,
       arg_min(rank_transfer_lo_ns, rank)::BIGINT AS transfer_lo_ns,
       arg_min(rank_transfer_hi_ns, rank)::BIGINT AS transfer_hi_ns
FROM 'collectives.parquet'
GROUP BY instance
ORDER BY MIN(k), instance;
