"""Drift of a model version through the /v1 API (docs/drift.md).

The serving side (or a job given an API token) sets a version's reference sample per
feature, posts current samples as reports, and logs predictions by id so that labels
arriving later judge them: each batch of labels makes a report of kind "labels" with
the predictions' error. A report that drifted submits the model's retraining template.
"""

from .operations import Operation

__all__ = ["Drift", "BATCH"]

# The most predictions or labels one request takes (openapi.yaml: maxItems).
BATCH = 10000

SET_REFERENCE = Operation("POST", "/v1/models/{id}/versions/{version}/drift/reference",
                          repeatable=True)
REPORT = Operation("POST", "/v1/models/{id}/versions/{version}/drift")
REPORTS = Operation("GET", "/v1/models/{id}/versions/{version}/drift")
PREDICTIONS = Operation("POST", "/v1/models/{id}/versions/{version}/drift/predictions",
                        repeatable=True)
LABELS = Operation("POST", "/v1/models/{id}/versions/{version}/drift/labels", repeatable=True)
RETRAINING = Operation("GET", "/v1/models/{id}/retraining")
SET_RETRAINING = Operation("PUT", "/v1/models/{id}/retraining", idempotency_key=True)
DELETE_RETRAINING = Operation("DELETE", "/v1/models/{id}/retraining")


def _id_values(items, what):
    """[{id, value}] from a dict {id: value}, (id, value) pairs or {id, value} dicts."""
    if isinstance(items, dict):
        items = items.items()
    out = []
    for i, item in enumerate(items):
        if isinstance(item, dict):
            out.append(item)
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            out.append({"id": item[0], "value": item[1]})
        else:
            raise TypeError(f"{what}[{i}]: must be (id, value) or {{'id', 'value'}}, got {item!r}")
    if not out:
        raise ValueError(f"{what}: must hold at least one, got none")
    return out


class Drift:
    """client.drift"""

    def __init__(self, transport):
        self._t = transport

    def set_reference(self, model, version, features=None, window=None, thresholds=None):
        """Sets the reference: features {name: [values] or {edges, counts}}, or a window.

        window: {fromMs, toMs[, segment]}, the samples reported and predictions logged
        then; thresholds: {ksP, wassersteinNormed, mae, accuracy}.
        """
        if (features is None) == (window is None):
            raise ValueError("features, window: give exactly one")
        body = {"features": features} if features is not None else {"window": window}
        if thresholds is not None:
            body["thresholds"] = thresholds
        return self._t.call(SET_REFERENCE, path={"id": model, "version": version}, body=body)

    def report(self, model, version, features, segment=None):
        """Posts current samples; returns the kept DriftReport (drifted, per feature)."""
        body = {"features": features}
        if segment is not None:
            body["segment"] = segment
        return self._t.call(REPORT, path={"id": model, "version": version}, body=body)

    def reports(self, model, version):
        """The version's reports (kinds features and labels), newest first."""
        answer = self._t.call(REPORTS, path={"id": model, "version": version})
        return answer.get("reports") or []

    def log_predictions(self, model, version, predictions, segment=None):
        """Logs predictions by id, in batches of 10,000; a repeat logs nothing twice.

        predictions: {id: value}, (id, value) pairs or {id, value} dicts. Returns the
        counts over every batch: {model, version, logged, alreadyLogged}.
        """
        items = _id_values(predictions, "predictions")
        total = {"model": model, "version": version, "logged": 0, "alreadyLogged": 0}
        for start in range(0, len(items), BATCH):
            body = {"predictions": items[start:start + BATCH]}
            if segment is not None:
                body["segment"] = segment
            answer = self._t.call(PREDICTIONS, path={"id": model, "version": version}, body=body)
            total["logged"] += answer.get("logged", 0)
            total["alreadyLogged"] += answer.get("alreadyLogged", 0)
        return total

    def log_labels(self, model, version, labels):
        """Labels logged predictions, in batches of 10,000; returns what they made.

        {labeled, alreadyLabeled, unknown, unknownIds (at most 20), reports}: each
        segment's newly labelled predictions make one report of kind "labels".
        """
        items = _id_values(labels, "labels")
        total = {"model": model, "version": version, "labeled": 0, "alreadyLabeled": 0,
                 "unknown": 0, "unknownIds": [], "reports": []}
        for start in range(0, len(items), BATCH):
            answer = self._t.call(LABELS, path={"id": model, "version": version},
                                  body={"labels": items[start:start + BATCH]})
            for key in ("labeled", "alreadyLabeled", "unknown"):
                total[key] += answer.get(key, 0)
            total["unknownIds"] = (total["unknownIds"] + (answer.get("unknownIds") or []))[:20]
            total["reports"].extend(answer.get("reports") or [])
        return total

    def retraining(self, model):
        """The retraining template, the tenant's budget and use, the jobs drift submitted."""
        return self._t.call(RETRAINING, path={"id": model})

    def set_retraining(self, model, job_spec, idempotency_key=None):
        """Sets the job spec a drifted report submits (no secretEnv)."""
        return self._t.call(SET_RETRAINING, path={"id": model}, body={"job": job_spec},
                            idempotency_key=idempotency_key)

    def delete_retraining(self, model):
        return self._t.call(DELETE_RETRAINING, path={"id": model})
