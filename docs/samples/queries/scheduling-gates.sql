SELECT namespace || '/' || name AS pod, gate, held_position, lifted_position,
       lifted_at
FROM scheduling_gates
ORDER BY pod, held_position, lifted_position
