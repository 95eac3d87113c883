"""The weekly SLO digest: per team, each SLO's week (budget, burn, who spent it, what fired), to the chat topic."""
