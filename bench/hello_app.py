"""The reference: a bare litestar "hello" route, served the same way as the emulator."""

from litestar import Litestar, get


@get("/hello")
async def hello() -> dict[str, str]:
    return {"hello": "world"}


app = Litestar([hello])
