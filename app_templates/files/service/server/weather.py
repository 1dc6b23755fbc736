"""GET /weather: asks Open-Meteo, through the platform (request.http), for the weather now.

The platform makes the request, and only to the destinations the manifest's ``egress`` lists: add
your service's host there and change the URL below to call another one.
"""

from platform_sdk import EgressRefused

URL = "https://api.open-meteo.com/v1/forecast"


def handle(request):
    params = {
        "latitude": request.query["latitude"],
        "longitude": request.query["longitude"],
        "current": "temperature_2m,wind_speed_10m",
    }
    try:
        answer = request.http.get(URL, params=params, timeout=10)
    except EgressRefused as refused:
        return {"error": refused.rule}, 503 if refused.retryable else 502
    if answer["status"] != 200:
        return {"error": f"the weather service answered {answer['status']}"}, 502
    current = (answer["json"] or {}).get("current") or {}
    return {
        "temperature_c": current.get("temperature_2m"),
        "wind_kmh": current.get("wind_speed_10m"),
        "time": current.get("time"),
    }
