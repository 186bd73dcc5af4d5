SELECT p.identity, p.first_node, p.node AS last_node, p.bound_at
FROM placements AS p
WHERE p.position = (SELECT MAX(q.position) FROM placements AS q WHERE q.identity = p.identity)
  AND p.node <> p.first_node
ORDER BY p.identity
