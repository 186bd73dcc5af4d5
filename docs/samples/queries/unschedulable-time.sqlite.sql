WITH first_unschedulable AS (
    SELECT namespace, uid, MIN(recorded_at) AS since
    FROM decisions WHERE kind = 'unschedulable'
    GROUP BY namespace, uid
), first_bound AS (
    SELECT uid, MIN(recorded_at) AS bound_at
    FROM decisions WHERE kind = 'bound'
    GROUP BY uid
)
SELECT u.namespace,
       COUNT(*) AS pods,
       COUNT(*) - COUNT(b.bound_at) AS still_pending,
       ROUND(SUM((julianday(COALESCE(b.bound_at, 'now')) - julianday(u.since)) * 86400), 1) AS unschedulable_seconds
FROM first_unschedulable AS u
LEFT JOIN first_bound AS b ON b.uid = u.uid AND b.bound_at > u.since
GROUP BY u.namespace
ORDER BY unschedulable_seconds DESC, u.namespace
