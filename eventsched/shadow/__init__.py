"""`eventsched shadow`: decide every pod another scheduler places, bind nothing, and say
where the two agree (shadow.py decides, verdict.py judges, scheduler.py wires)."""
