"""`eventsched ui`: a read-only web page over the decision log.

Server-rendered (Starlette and Jinja2 templates, served by uvicorn); every
read goes through `eventsched.audit.readonly`, which cannot write.
"""
