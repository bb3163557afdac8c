"""Lists of the /v1 API: every page followed to the end, or to a limit.

A list answer is {<items>: [...], nextCursor} (openapi.yaml, components.schemas.Page);
nextCursor is null on the last page and is sent back as `cursor` for the next one.
"""

__all__ = ["collect"]

# The API's largest page (openapi.yaml, components.parameters.Limit).
MAX_PAGE = 10000


def collect(transport, op, items_key, path=None, query=None, limit=None):
    """Every item of a list operation, in the API's order; at most `limit` when given.

    The operation must declare the `limit` and `cursor` query parameters when it is
    paged; one that is not (it answers nextCursor: null at once) is called once. Pages
    hold transport.page_size items (the CLI's --chunk-size).
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit: must be at least 1, got {limit}")
    query = dict(query or {})
    paged = "cursor" in op.query
    items = []
    while True:
        if paged and "limit" in op.query:
            page = transport.page_size
            query["limit"] = page if limit is None else min(page, limit - len(items))
        answer = transport.call(op, path=path, query=query)
        items.extend(answer.get(items_key) or [])
        cursor = answer.get("nextCursor")
        if limit is not None and len(items) >= limit:
            return items[:limit]
        if not paged or not cursor:
            return items
        query["cursor"] = cursor
