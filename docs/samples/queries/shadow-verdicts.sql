SELECT scheduler, observed, verdict, COUNT(*) AS verdicts,
       ROUND(CAST(MAX(lag_seconds) AS NUMERIC), 3) AS max_lag_s
FROM shadow_verdicts
GROUP BY scheduler, observed, verdict
ORDER BY scheduler, observed, verdict
