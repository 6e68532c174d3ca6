-- The step table, recomputed: for each step window (a host `ProfilerStep#N` range, one row
-- per device) the device's work phases clipped to the window, merged per class (gaps and
-- islands); busy is the union of all work, idle the host time it leaves. Equals the
-- `steps` table's own columns and `worksheet audit FILE --format json` under `steps`.
WITH w AS (
  SELECT rank, clock, step, device, start_ns AS ws, end_ns AS we FROM 'steps.parquet'),
cut AS (
  -- Each work phase inside a window, cut to it.
  SELECT w.rank, w.step, w.device, p.kind,
         GREATEST(p.start_ns, w.ws) AS s, LEAST(p.end_ns, w.we) AS e
  FROM w
  JOIN 'phases.parquet' p
    ON p.device = w.device AND p.clock IS NOT DISTINCT FROM w.clock
   AND p.stream IS NOT NULL AND p.start_ns < w.we AND p.end_ns > w.ws),
clipped AS (
  -- Once for its class, once as `busy` (all work).
  SELECT rank, step, device, kind AS class, s, e FROM cut
  UNION ALL
  SELECT rank, step, device, 'busy' AS class, s, e FROM cut),
o AS (
  SELECT *, MAX(e) OVER (PARTITION BY rank, step, device, class ORDER BY s, e
                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
  FROM clipped),
g AS (
  SELECT *, SUM(CASE WHEN before IS NULL OR s > before THEN 1 ELSE 0 END)
              OVER (PARTITION BY rank, step, device, class ORDER BY s, e
                    ROWS UNBOUNDED PRECEDING) AS island
  FROM o),
u AS (
  SELECT rank, step, device, class, SUM(e - s) AS ns
  FROM (SELECT rank, step, device, class, island, MIN(s) AS s, MAX(e) AS e
        FROM g GROUP BY rank, step, device, class, island)
  GROUP BY rank, step, device, class)
SELECT w.rank, w.step, w.device, (w.we - w.ws)::BIGINT AS host_ns,
       COALESCE(SUM(ns) FILTER (WHERE class = 'busy'), 0)::BIGINT AS busy_ns,
       (w.we - w.ws - COALESCE(SUM(ns) FILTER (WHERE class = 'busy'), 0))::BIGINT AS idle_ns,
       COALESCE(SUM(ns) FILTER (WHERE class = 'compute'), 0)::BIGINT AS compute_ns,
       COALESCE(SUM(ns) FILTER (WHERE class = 'communication'), 0)::BIGINT AS communication_ns,
       COALESCE(SUM(ns) FILTER (WHERE class = 'memory'), 0)::BIGINT AS memory_ns
FROM w LEFT JOIN u USING (rank, step, device)
GROUP BY w.rank, w.step, w.device, w.ws, w.we
ORDER BY w.rank, w.step, w.device;
