SELECT d.kind, COUNT(*) AS decisions, COUNT(DISTINCT d.uid) AS pods
FROM decisions AS d
JOIN decisions AS a ON a.attempt = d.attempt AND a.kind = 'attempt_started'
WHERE a.data ->> 'configDigest' = (
  SELECT data ->> 'digest' FROM events
  WHERE kind = 'config_loaded' AND scheduler = 'eventsched'
  ORDER BY position LIMIT 1
)
GROUP BY d.kind
ORDER BY decisions DESC, d.kind
