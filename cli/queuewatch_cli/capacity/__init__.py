"""`queuewatch capacity`: what the jobs' history says each runner type needed, and what N runners would give."""
