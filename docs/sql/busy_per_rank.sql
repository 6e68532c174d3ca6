-- Busy time per rank and device: the union of the work phases (those on a stream), merged
-- as gaps and islands. Equals `summary.union_ns` of `device:<device>` and what
-- `worksheet import` prints per device. Run in the folder of the tables:
--   duckdb -c ".read docs/sql/busy_per_rank.sql"   (or duckdb.sql(open(...).read()))
WITH p AS (
  SELECT rank, device, start_ns AS s, end_ns AS e
  FROM 'phases.parquet' WHERE stream IS NOT NULL),
o AS (
  SELECT rank, device, s, e,
         MAX(e) OVER (PARTITION BY rank, device ORDER BY s, e
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
  FROM p),
g AS (
  SELECT rank, device, s, e,
         SUM(CASE WHEN before IS NULL OR s > before THEN 1 ELSE 0 END)
           OVER (PARTITION BY rank, device ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
  FROM o),
i AS (
  SELECT rank, device, island, MIN(s) AS s, MAX(e) AS e FROM g GROUP BY rank, device, island)
SELECT rank, device, SUM(e - s)::BIGINT AS busy_ns
FROM i GROUP BY rank, device ORDER BY rank, device;
