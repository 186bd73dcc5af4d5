SELECT data ->> 'digest' AS digest, scheduler AS profile, MIN(recorded_at) AS first_loaded
FROM events
WHERE kind = 'config_loaded'
GROUP BY data ->> 'digest', scheduler
ORDER BY first_loaded
