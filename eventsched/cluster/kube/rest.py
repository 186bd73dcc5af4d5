"""Plain JSON over one keep-alive connection pool: what the scheduler sends and reads.

The official client's generated API methods validate every argument, build
a model for every answer and, with `_preload_content=False`, hand back a
response nobody reads, so urllib3 never returns its connection to the pool
and every request pays a new TLS handshake (measured at about 100 ms of CPU
a pod). The hot path (list, watch, Binding, Event, status patch) needs none
of that: this module sends `orjson`-encoded bodies over connections made by
one urllib3 pool built as the official client builds it for the same
configuration (so kubeconfig, in-cluster config, client certificates, proxies
and token refresh work as they do for the client; `kubeconfig.py` reads the
plain ones without it) and reads every answer completely. Requests and
watches are written and read on the socket by `keepalive.py`; through a proxy,
they go through urllib3's `urlopen`.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import orjson
import structlog
import urllib3

from eventsched.cluster.kube.connection import REQUEST_TIMEOUT as CLIENT_TIMEOUT
from eventsched.cluster.kube.connection import pool_manager, warn_insecure
from eventsched.cluster.kube.keepalive import (
    KeepAlivePool,
    RawAnswer,
    Stream,
    retry_after_seconds,
    split_lines,
)
from eventsched.cluster.kube.kubeconfig import ApiConfiguration
from eventsched.cluster.kube.ratelimit import TokenBucket
from eventsched.model.changes import ApiError

log = structlog.get_logger(__name__)

JSON = "application/json"
STRATEGIC_MERGE = "application/strategic-merge-patch+json"

#: Connection errors are retried by urllib3 (the request never left); an answer
#: that was cut off is not, since a Binding may have been applied.
_RETRIES = urllib3.Retry(total=2, connect=2, read=0, status=0, other=0, redirect=0)

#: How often an answer with Retry-After is sent again (client-go's default maxRetries).
MAX_RETRIES = 10

#: Seconds an auth header is reused before the configuration is asked again.
AUTH_REFRESH = 60.0

#: (host, method, code, seconds) of each request, as client-go's rest_client metrics
#: count them: `code` is the HTTP status or "<error>" when none came back; `seconds` is
#: None for a watch (client-go times requests, not watches).
RequestObserver = Callable[[str, str, str, float | None], None]

#: bytes -> decoded JSON (orjson.loads, or `slim.py`'s decoders for pods and nodes).
Decode = Callable[[bytes], Any]


class TransportError(Exception):
    """No answer from the API server (connection refused, reset, timed out)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """An API answer: the HTTP status and the decoded JSON body (None when there is none)."""

    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def message(self) -> str:
        """The `message` of a Status answer, else the HTTP status."""
        if isinstance(self.body, dict) and self.body.get("message"):
            return str(self.body["message"])
        return f"{self.status}"


class Rest:
    """Requests to one API server, through a pool of `pool_size` keep-alive connections."""

    def __init__(
        self,
        configuration: ApiConfiguration,
        pool_size: int = 32,
        connect_timeout: float = CLIENT_TIMEOUT[0],
        read_timeout: float = CLIENT_TIMEOUT[1],
    ) -> None:
        """`connect_timeout` and `read_timeout`: seconds a request (not a watch) may wait
        for a connection and for each read of its answer."""
        configuration = copy.copy(configuration)
        configuration.connection_pool_maxsize = pool_size
        #: Keep-alive connections kept (one returned to a full pool is closed).
        self.pool_size = pool_size
        self._configuration = configuration
        self._host = configuration.host.rstrip("/")
        manager = pool_manager(configuration, pool_size)
        # Without a proxy, requests go straight to the host's connection pool: the
        # manager would parse the URL and look the pool up again for every request.
        direct = not isinstance(manager, urllib3.ProxyManager)
        host_pool = manager.connection_from_url(self._host) if direct else None
        self._pool: Any = host_pool if host_pool is not None else manager
        self._timeout = urllib3.Timeout(connect=connect_timeout, read=read_timeout)
        self._prefix = (urllib3.util.parse_url(self._host).path or "") if direct else self._host
        self._auth: dict[str, str] = {}
        self._auth_until = 0.0
        self._auth_lock = threading.Lock()
        #: Set by whoever exports the API client's metrics; None costs nothing.
        self.observer: RequestObserver | None = None
        self._netloc = str(urllib3.util.parse_url(self._host).netloc or "")
        #: Requests and watches go straight to the socket (`keepalive.py`) over connections
        #: the host's pool makes; through a proxy, through urllib3.
        self._direct: KeepAlivePool | None = (
            KeepAlivePool(
                host_pool,
                self._netloc,
                pool_size,
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
            )
            if host_pool is not None
            else None
        )
        if not configuration.verify_ssl:
            warn_insecure(self._host)

    def _headers(self, content_type: str | None = None) -> dict[str, str]:
        headers = {"Accept": JSON, "User-Agent": "eventsched", **self._credentials()}
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def _credentials(self) -> dict[str, str]:
        """The auth header, asked of the configuration at most every AUTH_REFRESH seconds.

        `auth_settings()` runs the configuration's refresh hook (in-cluster
        tokens rotate, exec plugins renew); a kubeconfig's hook rebuilds part of
        the configuration on every call, which cost more than the request.
        """
        now = time.monotonic()
        if now < self._auth_until:
            return self._auth
        with self._auth_lock:
            if now >= self._auth_until:
                settings: Any = self._configuration.auth_settings()
                self._auth = {
                    str(auth["key"]): str(auth["value"])
                    for auth in settings.values()
                    if auth.get("in") == "header" and auth.get("value")
                }
                self._auth_until = now + AUTH_REFRESH
            return self._auth

    def _expire_credentials(self) -> None:
        self._auth_until = 0.0

    def _observe(self, method: str, code: str, seconds: float | None) -> None:
        if self.observer is not None:
            self.observer(self._netloc, method, code, seconds)

    def url(self, path: str, query: Mapping[str, str] | None = None) -> str:
        """What the pool is asked for: the path (after any prefix of the host) and query."""
        return f"{self._prefix}{path}?{urlencode(query)}" if query else f"{self._prefix}{path}"

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Mapping[str, str] | None = None,
        content_type: str = JSON,
        decode: Decode = orjson.loads,
    ) -> Answer:
        """One request; the answer is read whole and the connection goes back to the pool.

        `decode` reads a successful answer's body (an error's is decoded whole)."""
        payload = None if body is None else orjson.dumps(body)
        url = self.url(path, query)
        raw = self._send(method, url, payload, content_type)
        retries = 0
        while (wait := _server_wait(raw)) is not None and retries < MAX_RETRIES:
            # client-go's withRetry: a 429 or 5xx with Retry-After is sent again after
            # that many seconds, up to 10 times, whatever the verb (the server did not
            # apply it).
            retries += 1
            log.info(
                "retrying after the API server's Retry-After",
                method=method,
                path=path,
                status=raw.status,
                retries=retries,
                retry_after=wait,
            )
            time.sleep(wait)
            raw = self._send(method, url, payload, content_type)
        if not 200 <= raw.status < 300:
            decode = orjson.loads
        try:
            decoded = decode(raw.data) if raw.data else None
        except orjson.JSONDecodeError:
            decoded = {"message": raw.data[:200].decode("utf-8", "replace").strip()}
        return Answer(raw.status, decoded)

    def _send(self, method: str, url: str, payload: bytes | None, content_type: str) -> RawAnswer:
        """One attempt: the whole answer, or TransportError when none came back."""
        headers = self._headers(content_type if payload is not None else None)
        started = time.perf_counter()
        try:
            if self._direct is not None:
                raw = self._direct.request(method, url, headers, payload)
            else:
                raw = self._through_urllib3(method, url, headers, payload)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            self._observe(method, "<error>", time.perf_counter() - started)
            raise TransportError(_reason(exc)) from exc
        self._observe(method, str(raw.status), time.perf_counter() - started)
        if raw.status == 401:
            self._expire_credentials()  # a rotated token: ask the configuration again next time
        return raw

    def _through_urllib3(
        self, method: str, url: str, headers: dict[str, str], payload: bytes | None
    ) -> RawAnswer:
        response = self._pool.urlopen(
            method,
            url,
            body=payload,
            headers=headers,
            timeout=self._timeout,
            retries=_RETRIES,
            preload_content=True,
        )
        return RawAnswer(
            response.status, response.data, retry_after_seconds(response.headers.get("Retry-After"))
        )

    def stream(
        self,
        path: str,
        query: Mapping[str, str],
        on_open: Any = None,
        decode: Decode = orjson.loads,
    ) -> Iterator[dict[str, Any]]:
        """A watch: one JSON object per line, read by `decode`, until the server ends the
        stream.

        `on_open(stream)` is called with the open stream so another thread can end it
        (`stream.shutdown()`, stopping an informer).
        """
        url = self.url(path, query)
        try:
            if self._direct is not None:
                stream: Stream | _Urllib3Stream = self._direct.open(url, self._headers())
            else:
                stream = _Urllib3Stream.open(self._pool, url, self._headers())
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            self._observe("GET", "<error>", None)
            raise TransportError(_reason(exc)) from exc
        self._observe("GET", str(stream.status), None)
        try:
            if on_open is not None:
                on_open(stream)
            if stream.status != 200:
                data = stream.read()
                try:
                    body = orjson.loads(data)
                except orjson.JSONDecodeError:
                    body = {"message": data[:200].decode("utf-8", "replace")}
                yield {"type": "ERROR", "object": {"code": stream.status, **body}}
                return
            for line in stream.lines():
                if line.strip():
                    yield decode(line)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransportError(_reason(exc)) from exc
        finally:
            stream.close()


class _Urllib3Stream:
    """A watch through urllib3 (through a proxy), read as `keepalive.Stream` is."""

    def __init__(self, response: Any) -> None:
        self._response = response
        self.status: int = response.status
        self._complete = False

    @classmethod
    def open(cls, pool: Any, url: str, headers: dict[str, str]) -> _Urllib3Stream:
        return cls(
            pool.urlopen(
                "GET",
                url,
                headers=headers,
                timeout=urllib3.Timeout(connect=CLIENT_TIMEOUT[0], read=None),
                retries=_RETRIES,
                preload_content=False,
            )
        )

    def read(self) -> bytes:
        data: bytes = self._response.read()
        self._complete = True
        return data

    def lines(self) -> Iterator[bytes]:
        yield from split_lines(self._response.stream(65536, decode_content=True))
        self._complete = True

    def shutdown(self) -> None:
        self._response.shutdown()

    def close(self) -> None:
        if not self._complete:  # stopped or cut off mid-stream: the connection cannot be reused
            self._response.close()
        self._response.release_conn()


def limited_request(
    rest: Rest,
    limiter: TokenBucket,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = JSON,
) -> Answer:
    """One request under the adapter's rate limit, for callers that report failures as
    ApiError (VolumeBinding's and preemption's requests): no answer at all is code 0."""
    limiter.acquire()
    try:
        return rest.request(method, path, body, content_type=content_type)
    except TransportError as exc:
        raise ApiError(0, f"no answer from the API server: {exc}") from exc


def resource_path(resource: str, namespace: str | None = None, name: str | None = None) -> str:
    """`/api/v1/[namespaces/NS/]RESOURCE[/NAME]` for core resources, apis/GROUP/VERSION otherwise."""
    group, _, plural = resource.rpartition("/")
    base = f"/apis/{group}" if group else "/api/v1"
    path = (
        f"{base}/namespaces/{quote(namespace, safe='')}/{plural}"
        if namespace
        else f"{base}/{plural}"
    )
    return f"{path}/{quote(name, safe='')}" if name else path


def _server_wait(raw: RawAnswer) -> float | None:
    """Seconds the server asked to wait before the same request is sent again (client-go's
    checkWait: a 429 or any 5xx with a Retry-After); None: not to send it again."""
    if raw.retry_after is None or not (raw.status == 429 or raw.status >= 500):
        return None
    return float(max(raw.retry_after, 0))


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc
    text = str(reason).strip()
    return text.splitlines()[0] if text else type(exc).__name__
