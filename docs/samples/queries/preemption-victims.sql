SELECT preemptor_namespace || '/' || preemptor_name AS preemptor, preemptor_priority, node,
       victim_namespace || '/' || victim_name AS victim, priority, pdb_violation, outcome,
       evicted_position
FROM preemption_victims
ORDER BY position, victim
