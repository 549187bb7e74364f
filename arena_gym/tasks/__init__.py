"""The navigation task: episodes, rewards, curriculum, metrics, scans."""
