SELECT namespace || '/' || name AS pod, observed, node AS theirs, picked AS ours, cause
FROM shadow_verdicts
WHERE verdict = 'differ'
ORDER BY position
LIMIT 5
