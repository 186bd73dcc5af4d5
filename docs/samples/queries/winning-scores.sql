SELECT s.plugin, COUNT(*) AS attempts, ROUND(AVG(s.weighted), 1) AS avg_weighted
FROM plugin_scores AS s
JOIN decisions AS sel ON sel.attempt = s.attempt AND sel.kind = 'selected' AND sel.node = s.node
GROUP BY s.plugin
ORDER BY avg_weighted DESC, s.plugin
