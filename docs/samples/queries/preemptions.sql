SELECT position, namespace || '/' || name AS preemptor, node, victims, victim_names,
       chosen_by, candidates
FROM preemptions
ORDER BY position
