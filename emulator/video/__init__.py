"""Video generation: POST /generate/video and its generation records."""
