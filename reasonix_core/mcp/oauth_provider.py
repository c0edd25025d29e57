"""The ``mcp`` SDK's ``OAuthClientProvider`` on our token store (imported with the
SDK, off the event loop: see :mod:`._sdk`).

What this adds to the SDK's flow, and why:

- the absolute expiry, the authorization server's and the protected resource's
  metadata are stored and restored (the SDK keeps them only in memory, so after
  a restart it would take an expired token for a valid one, and refresh at a
  guessed token endpoint without the ``resource``);
- a 401 with a refresh token refreshes before any new login (the SDK goes straight
  to a new authorization), and a refused refresh forgets the dead grant;
- without an interactive login (every session), a server that needs one raises
  :class:`~reasonix_core.mcp.oauth.McpLoginRequired` at the first 401: no
  discovery, no registration, no browser.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import ValidationError

from reasonix_core.mcp.config import McpServerConfig
from reasonix_core.mcp.oauth import LoginFailed, LoopbackLogin, McpAuth, McpLoginRequired
from reasonix_core.mcp.tokens import TokenStore, bounded_expiry

__all__ = ["provider_for"]

log = logging.getLogger(__name__)

# Only used to register a client during an interactive login, which replaces it
# with its own listener's address; sessions never register.
_NO_REDIRECT = "http://127.0.0.1/callback"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def provider_for(config: McpServerConfig, auth: McpAuth | None) -> httpx2.Auth | None:
    """The OAuth provider of a remote server's connection, or None: no auth
    configured, a local server, or an ``Authorization`` header of the user's own
    (a static token is not ours to replace)."""
    if auth is None or config.transport == "stdio":
        return None
    if any(k.lower() == "authorization" for k in config.headers):
        return None
    return ReasonixOAuthProvider(config, auth.store, auth.login)


class _Storage:
    """The SDK's ``TokenStorage`` on one URL's record of the store."""

    def __init__(self, store: TokenStore, url: str) -> None:
        self.store = store
        self.url = url

    async def get_tokens(self) -> OAuthToken | None:
        return _load(OAuthToken, self.store.record(self.url).get("tokens"))

    async def set_tokens(self, tokens: OAuthToken) -> None:
        for field in (tokens.access_token, tokens.refresh_token or "", tokens.token_type):
            if _CONTROL.search(field):
                # A CR LF in a token would smuggle a header into every request (the
                # HTTP library then fails it as "could not connect"); never stored.
                raise LoginFailed(
                    "the authorization server's token holds a control character; not used"
                )
        self.store.save_tokens(self.url, tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return _load(OAuthClientInformationFull, self.store.record(self.url).get("client"))

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.store.update(self.url, client=client_info.model_dump(mode="json", exclude_none=True))


class ReasonixOAuthProvider(OAuthClientProvider):
    def __init__(
        self, config: McpServerConfig, store: TokenStore, login: LoopbackLogin | None
    ) -> None:
        self._server = config.name
        self._config = config
        self._store = store
        self._login = login
        self._refresh_tried = False
        self._refreshing = False
        redirect = login.redirect_uri if login is not None else _NO_REDIRECT
        metadata = OAuthClientMetadata.model_validate(
            {
                "client_name": "Reasonix",
                "redirect_uris": [redirect],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }
        )
        super().__init__(
            config.url,
            metadata,
            _Storage(store, config.url),
            redirect_handler=login.open_browser if login is not None else None,
            callback_handler=self._callback if login is not None else None,
        )
        # The SDK computes the expiry as time.time() + int(expires_in): a hostile
        # authorization server's 10**400 overflowed the float and failed the login.
        # The store's bounded expiry replaces it (the context is a plain dataclass).
        setattr(self.context, "update_token_expiry", self._update_token_expiry)  # noqa: B010

    def _update_token_expiry(self, token: OAuthToken) -> None:
        self.context.token_expiry_time = bounded_expiry(token.expires_in)

    async def _callback(self) -> AuthorizationCodeResult:
        assert self._login is not None
        got = await self._login.wait()
        return AuthorizationCodeResult(code=got.code, state=got.state, iss=got.iss)

    # -- what the SDK keeps only in memory -------------------------------------

    async def _initialize(self) -> None:
        await super()._initialize()
        if self._config.client_id:  # registered beforehand: the declaration is the truth
            self.context.client_info = self._configured_client()
        record = self._store.record(self.context.server_url)
        expires_at = record.get("expires_at")
        if isinstance(expires_at, int | float):
            self.context.token_expiry_time = float(expires_at)
        if self.context.oauth_metadata is None:
            self.context.oauth_metadata = _load(OAuthMetadata, record.get("metadata"))
        if self.context.protected_resource_metadata is None:
            prm = _load(ProtectedResourceMetadata, record.get("resource_metadata"))
            self.context.protected_resource_metadata = prm
            if prm is not None and prm.authorization_servers and not self.context.auth_server_url:
                self.context.auth_server_url = str(prm.authorization_servers[0])

    def _configured_client(self) -> OAuthClientInformationFull:
        redirect = self._login.redirect_uri if self._login is not None else _NO_REDIRECT
        secret = self._config.client_secret
        return OAuthClientInformationFull.model_validate(
            {
                "client_id": self._config.client_id,
                "client_secret": secret or None,
                "redirect_uris": [redirect],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "client_secret_post" if secret else "none",
            }
        )

    def _save_metadata(self) -> None:
        ctx = self.context
        self._store.update(
            ctx.server_url,
            metadata=_dump(ctx.oauth_metadata),
            resource_metadata=_dump(ctx.protected_resource_metadata),
        )

    # -- refresh before a new login ---------------------------------------------

    async def _perform_authorization(self) -> httpx2.Request:
        if self.context.can_refresh_token() and not self._refresh_tried:
            self._refresh_tried = True
            self._refreshing = True
            return await self._refresh_token()
        if self._login is None:
            raise McpLoginRequired(self._server)
        return await super()._perform_authorization()

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        if self._refreshing:
            self._refreshing = False
            if not await self._handle_refresh_response(response):
                raise McpLoginRequired(self._server)
            return
        await super()._handle_token_response(response)
        self._refresh_tried = False
        self._save_metadata()

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        ok = await super()._handle_refresh_response(response)
        if ok:
            self._refresh_tried = False
            self._save_metadata()
        else:  # the grant is gone: do not offer the dead refresh token again
            self._store.forget_tokens(self.context.server_url)
        return ok

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, stopped at the first 401 when nothing could answer it
        without a person: no refresh token and no interactive login."""
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if (
                    outgoing is request
                    and response.status_code == 401
                    and self._login is None
                    and not self.context.can_refresh_token()
                ):
                    raise McpLoginRequired(self._server)
                if outgoing is request and response.status_code == 401:
                    self._forget_foreign_registration()
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _forget_foreign_registration(self) -> None:
        """Before a login: a registration made for another listener port would be
        refused at /authorize (its redirect URI differs), so register again."""
        client = self.context.client_info
        if self._login is None or client is None or self.context.can_refresh_token():
            return
        if self._config.client_id:  # a configured client is never re-registered
            return
        registered = {str(u) for u in client.redirect_uris or []}
        if self._login.redirect_uri not in registered:
            self.context.client_info = None


def _load(model: Any, data: object) -> Any:
    if not isinstance(data, dict):
        return None
    try:
        return model.model_validate(data)
    except ValidationError:
        log.warning("ignoring an unreadable %s record in the MCP token store", model.__name__)
        return None


def _dump(value: Any) -> dict[str, Any] | None:
    return None if value is None else value.model_dump(mode="json", exclude_none=True)
