SELECT preemptor_namespace || '/' || preemptor_name AS preemptor, node,
       victim_namespace || '/' || victim_name AS victim, priority, pdb_violation, outcome
FROM preemption_victims
ORDER BY position, victim
