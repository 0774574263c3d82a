"""The benchmark domain's building blocks: invented values, schema helpers, the `Tool` record
and the argument makers and request texts the tool tables use (synthetic)."""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Args = dict[str, Any]
Json = dict[str, Any]

# --- values -------------------------------------------------------------------------------

NAMES = (
    "Anna", "Ben", "Chloe", "Dmitri", "Elif", "Farid", "Greta", "Hiro", "Ines", "Jonas",
    "Kasia", "Luca", "Maya", "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tara",
    "Umar", "Vera", "Wen", "Ximena", "Yusuf", "Zofia",
)  # fmt: skip
CITIES = (
    ("Berlin", "DE", "10115"), ("Lyon", "FR", "69001"), ("Porto", "PT", "4000-123"),
    ("Krakow", "PL", "30-001"), ("Gent", "BE", "9000"), ("Graz", "AT", "8010"),
    ("Malmo", "SE", "211 19"), ("Leeds", "GB", "LS1 4AP"), ("Turin", "IT", "10121"),
    ("Bilbao", "ES", "48001"), ("Utrecht", "NL", "3511"), ("Aarhus", "DK", "8000"),
)  # fmt: skip
STREETS = ("Main Street", "Harbour Road", "Linden Allee", "Rue Centrale", "Station Square")
CATEGORIES = ("electronics", "home", "garden", "toys", "books", "sports", "fashion")
CURRENCIES = ("EUR", "USD", "GBP", "PLN", "SEK")
WAREHOUSES = ("north", "south", "east", "west")
CARRIERS = ("dhl", "ups", "dpd", "gls", "postnl")
PRODUCT_WORDS = (
    "desk lamp", "trail shoes", "coffee grinder", "rain jacket", "board game", "yoga mat",
    "kettle", "backpack", "headphones", "garden hose", "wool scarf", "picture book",
)  # fmt: skip

ORDER_ID = r"^ORD-[0-9]{6}$"
CUSTOMER_ID = r"^CUS-[0-9]{5}$"
SKU = r"^SKU-[A-Z]{3}-[0-9]{4}$"
DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
TRACKING = r"^[A-Z]{2}[0-9]{9}[A-Z]{2}$"


def order_id(rng: random.Random) -> str:
    return f"ORD-{rng.randrange(100000, 900000)}"  # 9xxxxx ids are the executor's failures


def customer_id(rng: random.Random) -> str:
    return f"CUS-{rng.randrange(10000, 100000)}"


def sku(rng: random.Random) -> str:
    letters = "".join(rng.choice(string.ascii_uppercase) for _ in range(3))
    return f"SKU-{letters}-{rng.randrange(1000, 10000)}"


def day(rng: random.Random) -> str:
    return f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"


def tracking(rng: random.Random) -> str:
    head = "".join(rng.choice(string.ascii_uppercase) for _ in range(2))
    return f"{head}{rng.randrange(10**8, 10**9)}{rng.choice(('DE', 'GB', 'NL', 'FR'))}"


def address(rng: random.Random, full: bool = True) -> Args:
    city, country, postal = rng.choice(CITIES)
    value: Args = {"city": city, "postal_code": postal, "country": country}
    if full:
        value = {"line1": f"{rng.randrange(1, 200)} {rng.choice(STREETS)}", **value}
        if rng.random() < 0.3:
            value["line2"] = f"Flat {rng.randrange(1, 40)}"
    return value


def money(rng: random.Random, top: int = 500) -> float:
    return round(rng.uniform(5, top), 2)


# --- schema helpers -------------------------------------------------------------------------


def obj(properties: dict[str, Any], required: list[str]) -> Json:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def text(description: str, **more: Any) -> Json:
    return {"type": "string", "description": description, **more}


def enum(values: tuple[str, ...] | list[str], description: str) -> Json:
    return {"type": "string", "enum": list(values), "description": description}


def address_schema(full: bool) -> Json:
    properties: dict[str, Any] = {
        "city": text("City name.", minLength=1, maxLength=60),
        "postal_code": text(
            "Postal code as written locally.", pattern=r"^[A-Z0-9][A-Z0-9 -]{2,9}$"
        ),
        "country": text("ISO 3166-1 alpha-2 country code.", pattern=r"^[A-Z]{2}$"),
    }
    required = ["city", "postal_code", "country"]
    if full:
        properties = {
            "line1": text("Street and number.", minLength=3, maxLength=100),
            "line2": text("Flat, floor or company (optional).", maxLength=100),
            **properties,
        }
        required = ["line1", *required]
    return obj(properties, required)


# --- the tools ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool:
    """One tool: its schema, how to make valid arguments, and how people ask for it."""

    name: str
    description: str
    effect: str
    parameters: Json
    make: Callable[[random.Random], Args]
    ask: Callable[[Args], str]
    """A request stating everything the call needs."""
    result: Json
    """What the fake executor returns on success (the same for every call)."""
    answer: Callable[[Args], str]
    """The careful model's text once the result is back; it contains `keyword`."""
    keyword: str
    vague: Callable[[Args], str] | None = None
    """A request that leaves out a required value (the careful model asks for it)."""
    clarify: str = "Could you give me the missing details?"
    mutate: Callable[[Args, random.Random], Args] | None = None
    """A plausible wrong filling of the arguments (the hasty model's mistake)."""
    error: tuple[str, str, str] | None = None
    """(argument, code, message): the executor fails calls whose argument is a 9xxxxx id."""
    sibling: str | None = None
    """A tool the hasty model confuses this one with (same required argument names)."""
    extra: dict[str, str] = field(default_factory=dict)


def include(rng: random.Random) -> list[str]:
    return rng.sample(["items", "payments", "shipments"], rng.randrange(1, 3))


def bump_order(args: Args, rng: random.Random) -> Args:
    wrong = dict(args)
    number = int(args["order_id"][4:]) + rng.randrange(1, 9)
    wrong["order_id"] = f"ORD-{number if number < 900000 else number - 800000}"
    return wrong


def swap_enum(key: str, values: tuple[str, ...]) -> Callable[[Args, random.Random], Args]:
    def mutate(args: Args, rng: random.Random) -> Args:
        wrong = dict(args)
        wrong[key] = rng.choice([v for v in values if v != args.get(key)])
        return wrong

    return mutate


def scale(key: str, factor: float) -> Callable[[Args, random.Random], Args]:
    def mutate(args: Args, rng: random.Random) -> Args:
        wrong = dict(args)
        wrong[key] = round(args[key] * factor, 2)
        return wrong

    return mutate


def make_search(rng: random.Random) -> Args:
    args: Args = {"query": rng.choice(PRODUCT_WORDS)}
    if rng.random() < 0.7:
        filters: Args = {"category": rng.choice(CATEGORIES)}
        if rng.random() < 0.6:
            low = rng.randrange(0, 100)
            filters["price"] = {"min": low, "max": low + rng.randrange(10, 400)}
        if rng.random() < 0.5:
            filters["in_stock"] = True
        args["filters"] = filters
    if rng.random() < 0.4:
        args["sort"] = rng.choice(["relevance", "price_asc", "price_desc", "rating"])
    return args


def ask_search(a: Args) -> str:
    said = f"Can you find a {a['query']}"
    filters = a.get("filters", {})
    if "category" in filters:
        said += f" in {filters['category']}"
    if "price" in filters:
        said += f" between {filters['price']['min']} and {filters['price']['max']} euros"
    if filters.get("in_stock"):
        said += ", only what is in stock"
    if "sort" in a:
        said += f", sorted by {a['sort'].replace('_', ' ')}"
    return said + "?"


def make_quote(rng: random.Random) -> Args:
    parcels = []
    for _ in range(rng.randrange(1, 4)):
        parcel: Args = {"weight_kg": round(rng.uniform(0.2, 30), 1)}
        if rng.random() < 0.5:
            parcel["dimensions_cm"] = {
                "length": rng.randrange(10, 120),
                "width": rng.randrange(10, 80),
                "height": rng.randrange(5, 60),
            }
        parcels.append(parcel)
    origin = address(rng, full=False)
    destination = address(rng, full=False)
    while destination["city"] == origin["city"]:
        destination = address(rng, full=False)
    return {
        "origin": origin,
        "destination": destination,
        "parcels": parcels,
        "service": rng.choice(["economy", "standard", "express"]),
    }


def ask_quote(a: Args) -> str:
    parts = []
    for parcel in a["parcels"]:
        said = f"{parcel['weight_kg']} kg"
        if "dimensions_cm" in parcel:
            d = parcel["dimensions_cm"]
            said += f" ({d['length']}x{d['width']}x{d['height']} cm)"
        parts.append(said)
    o, d = a["origin"], a["destination"]
    return (
        f"What does {a['service']} shipping cost for {', '.join(parts)} from {o['city']} "
        f"{o['postal_code']} {o['country']} to {d['city']} {d['postal_code']} {d['country']}?"
    )


def make_return(rng: random.Random) -> Args:
    items = [
        {
            "sku": sku(rng),
            "quantity": rng.randrange(1, 4),
            "condition": rng.choice(["unopened", "opened", "damaged"]),
        }
        for _ in range(rng.randrange(1, 3))
    ]
    return {
        "order_id": order_id(rng),
        "items": items,
        "refund_method": rng.choice(["original_payment", "store_credit"]),
    }


def ask_return(a: Args) -> str:
    items = " and ".join(f"{i['quantity']}x {i['sku']} ({i['condition']})" for i in a["items"])
    method = a["refund_method"].replace("_", " ")
    return f"Please start a return on {a['order_id']} for {items}; refund to {method}."


def make_ticket(rng: random.Random) -> Args:
    args: Args = {
        "customer_id": customer_id(rng),
        "subject": f"{rng.choice(PRODUCT_WORDS).capitalize()} arrived "
        f"{rng.choice(['broken', 'late', 'incomplete', 'in the wrong colour'])}",
        "priority": rng.choice(["low", "normal", "high", "urgent"]),
        "category": rng.choice(["delivery", "product", "billing", "account"]),
    }
    if rng.random() < 0.5:
        args["order_id"] = order_id(rng)
    if rng.random() < 0.4:
        args["tags"] = rng.sample(["repeat", "vip", "social", "warranty", "gift"], 2)
    return args


def ask_ticket(a: Args) -> str:
    said = f'Open a {a["priority"]} {a["category"]} ticket for {a["customer_id"]}: "{a["subject"]}"'
    if "order_id" in a:
        said += f", it is about {a['order_id']}"
    if "tags" in a:
        said += f"; tag it {' and '.join(a['tags'])}"
    return said + "."


def make_callback(rng: random.Random) -> Args:
    return {
        "customer_id": customer_id(rng),
        "phone": f"+{rng.choice(['49', '33', '44', '48', '31'])}{rng.randrange(10**8, 10**10)}",
        "window": {"date": day(rng), "slot": rng.choice(["morning", "afternoon", "evening"])},
        "topic": rng.choice(["order", "return", "billing", "other"]),
    }


ORDER = text("Order id like ORD-123456.", pattern=ORDER_ID)
CUSTOMER = text("Customer id like CUS-12345.", pattern=CUSTOMER_ID)
SKU_FIELD = text("Stock keeping unit like SKU-ABC-1234.", pattern=SKU)
