"""The request limits each inference task keeps, so that tasks running at once never ask more
of an endpoint than the config allows.

Two kinds of limit (max_concurrency: requests in flight; query_per_second: request starts):
- a model's own (its entry, else its type's default) holds for the model: a model split into
  shards divides it among them;
- an endpoint's (the config's `endpoints`, by base_url) holds for every model asking that
  base_url: it is divided among all their tasks, so that 8 models on one server do not send it
  8 times what it takes. Where the model's entry gives a limit of its own, the lower of the two
  holds; where it does not, the endpoint's share replaces the type's default.

The shares are even and fixed when the tasks are planned: tasks need no coordination, whether
they run as processes of one machine or as jobs on several. The cost: a task that ends early
leaves its share unused.
"""
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from ..registry import type_attribute
from ..utils.checks import check_number
from ..utils.options import check_options

LIMITS = ('max_concurrency', 'query_per_second')
EXAMPLE = "endpoints = [dict(base_url='http://gpu-node:8000/v1', max_concurrency=32)]"


def endpoint_url(url) -> str:
    """The key an endpoint is known by: its base_url without a trailing slash."""
    return str(url).rstrip('/')


class Endpoint(BaseModel):
    """One entry of the config's `endpoints`: the limits of the server at `base_url`, which every
    model asking that base_url shares (at least one limit)."""
    model_config = ConfigDict(extra='forbid', strict=True)

    base_url: str = Field(description='the base_url the models give (a trailing slash does not matter)')
    max_concurrency: Optional[int] = Field(None, description='requests in flight at once, over every task asking it')
    query_per_second: Optional[float] = Field(None, description='request starts per second, over every task asking it')


def check_endpoints(endpoints: Optional[list]) -> dict:
    """The config's `endpoints` checked: {url: {limit: value}} of those that set a limit. Raises
    ConfigError naming the entry to fix."""
    if endpoints is None:
        return {}
    if not isinstance(endpoints, (list, tuple)):
        raise ConfigError(f'must be a list of dicts, got {type(endpoints).__name__}', key='endpoints',
                          fix=f'e.g. {EXAMPLE}')
    limits = {}
    for i, entry in enumerate(endpoints):
        key = f'endpoints[{i}]'
        if not isinstance(entry, dict):
            raise ConfigError(f'must be a dict, got {type(entry).__name__}', key=key, fix=f'e.g. {EXAMPLE}')
        check_options(Endpoint, entry, key)
        url = entry['base_url']
        if not url.strip('/'):
            raise ConfigError(f'needs a base_url, the one its models give, got {url!r}', key=f'{key}.base_url',
                              fix=f'e.g. {EXAMPLE}')
        if endpoint_url(url) in limits:
            raise ConfigError(f'base_url {url!r} is given twice', key=f'{key}.base_url',
                              fix='give each endpoint one entry with all its limits')
        given = {name: entry[name] for name in LIMITS if entry.get(name) is not None}
        if not given:
            raise ConfigError('sets no limit', key=key, fix=f'give max_concurrency and/or query_per_second: {EXAMPLE}')
        if 'max_concurrency' in given:
            check_number(f'{key}.max_concurrency', given['max_concurrency'], whole=True, at_least=1, example=32)
        if 'query_per_second' in given:
            check_number(f'{key}.query_per_second', given['query_per_second'], above=0, example=10.0)
        limits[endpoint_url(url)] = given
    return limits


def asks_endpoint(model: dict) -> Optional[str]:
    """The endpoint (endpoint_url) an API model entry asks, or None (a model that starts its own
    server, or no API model)."""
    api_only = type_attribute(model.get('type', ''), 'api_only', False)
    if not api_only or model.get('server') or not model.get('base_url'):
        return None
    return endpoint_url(model['base_url'])


def endpoint_sharing(models: list, limits: dict, tasks_per_model: int) -> dict:
    """{url: how many inference tasks ask it} for the endpoints that set a limit; a ConfigError
    where an endpoint allows fewer requests at once than that (each task needs one)."""
    sharing = {}
    for model in models:
        url = asks_endpoint(model)
        if url in limits:
            sharing[url] = sharing.get(url, 0) + tasks_per_model
    for i, url in enumerate(limits):
        concurrency = limits[url].get('max_concurrency')
        if concurrency and sharing.get(url, 0) > concurrency:
            raise ConfigError(f'{url} allows {concurrency} requests at once, but {sharing[url]} inference tasks '
                              f'ask it, each needing one', key=f'endpoints[{i}].max_concurrency',
                              fix=f'raise it to {sharing[url]} or more, or ask that endpoint with fewer models '
                                  f'(or shards) in one run')
    return sharing


def task_limits(entry: dict, shards: int = 1, endpoint: Optional[dict] = None, sharing: int = 1) -> dict:
    """A model entry with the limits one of its `shards` tasks keeps: the model's own divided among
    its shards, within its share of `endpoint`'s limits (divided among the `sharing` tasks asking
    it). A limit the entry does not give is its type's default, the class's `request_limits`
    (read, never built)."""
    entry = dict(entry)
    defaults = dict(type_attribute(entry.get('type', ''), 'request_limits', {}))
    for name in LIMITS:
        own = entry.get(name, defaults.get(name))
        mine = _divide(name, own, shards) if own and shards > 1 else own
        if endpoint and endpoint.get(name):
            share = _divide(name, endpoint[name], sharing)
            # the type's default gives way to a limit the user set for the endpoint
            mine = share if name not in entry or not mine else min(mine, share)
        if mine is not None:
            entry[name] = mine
    return entry


def share_limits(entry: dict, count: int) -> dict:
    """A model's request limits divided among its `count` shards, as if all ran at once: together
    they never exceed what the config allows, however many the runner starts."""
    return task_limits(entry, shards=count)


def _divide(name, value, count):
    return max(1, int(value) // count) if name == 'max_concurrency' else value / count
