SELECT plugin, COUNT(*) AS rejections, COUNT(DISTINCT node) AS nodes
FROM (SELECT DISTINCT position, node, plugin FROM filter_rejections
      WHERE recorded_at > datetime('now', '-7 days')) AS r
GROUP BY plugin
ORDER BY rejections DESC, plugin
