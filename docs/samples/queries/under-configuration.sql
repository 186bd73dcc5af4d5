SELECT d.kind, COUNT(*) AS decisions, COUNT(DISTINCT d.uid) AS pods
FROM decisions AS d
JOIN decisions AS a ON a.attempt = d.attempt AND a.kind = 'attempt_started'
WHERE a.data ->> 'configDigest' = '880213ac8965bc9c'
GROUP BY d.kind
ORDER BY decisions DESC, d.kind
