"""The first eight tools of the benchmark contract: order, product, shipping and customer
lookups (all read-only; synthetic)."""

from __future__ import annotations

from tool_kit import (
    CARRIERS,
    CATEGORIES,
    CUSTOMER,
    DATE,
    ORDER,
    SKU_FIELD,
    TRACKING,
    WAREHOUSES,
    Tool,
    address_schema,
    ask_quote,
    ask_search,
    bump_order,
    customer_id,
    day,
    enum,
    include,
    make_quote,
    make_search,
    obj,
    order_id,
    sku,
    swap_enum,
    text,
    tracking,
)

LOOKUP_TOOLS: tuple[Tool, ...] = (
    Tool(
        "get_order",
        "Look up an order by its exact id: status, items, payments, shipments.",
        "read",
        obj(
            {
                "order_id": ORDER,
                "include": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["items", "payments", "shipments"]},
                    "uniqueItems": True,
                    "maxItems": 3,
                    "description": "Extra sections to include.",
                },
            },
            ["order_id"],
        ),
        lambda r: {
            "order_id": order_id(r),
            **({"include": include(r)} if r.random() < 0.4 else {}),
        },
        lambda a: (
            f"Where is my order {a['order_id']}?"
            + (f" Please include the {' and '.join(a['include'])}." if "include" in a else "")
        ),
        {"status": "shipped", "carrier": "dhl", "tracking_number": "JD014600003DE"},
        lambda a: f"Order {a['order_id']} has shipped with DHL (tracking JD014600003DE).",
        "shipped",
        vague=lambda a: "Where is my order? It should have arrived by now.",
        clarify="Could you tell me the order id? It looks like ORD-123456.",
        mutate=bump_order,
        error=("order_id", "ORDER_NOT_FOUND", "No order with this id"),
        sibling="get_invoice",
    ),
    Tool(
        "list_orders",
        "List a customer's orders, newest first, optionally filtered.",
        "read",
        obj(
            {
                "customer_id": CUSTOMER,
                "status": enum(("open", "shipped", "delivered", "cancelled"), "Only this status."),
                "placed_after": text("Only orders placed after this date.", pattern=DATE),
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
            },
            ["customer_id"],
        ),
        lambda r: {
            "customer_id": customer_id(r),
            **({"status": r.choice(["open", "shipped", "delivered"])} if r.random() < 0.5 else {}),
            **({"placed_after": day(r)} if r.random() < 0.4 else {}),
            **({"limit": r.randrange(1, 51)} if r.random() < 0.3 else {}),
        },
        lambda a: (
            f"Show the orders of {a['customer_id']}"
            + (f" that are {a['status']}" if "status" in a else "")
            + (f" placed after {a['placed_after']}" if "placed_after" in a else "")
            + (f", at most {a['limit']}" if "limit" in a else "")
            + "."
        ),
        {"orders": [{"order_id": "ORD-100200", "status": "delivered"}], "total": 1},
        lambda a: f"{a['customer_id']} has one matching order, ORD-100200, delivered.",
        "delivered",
        vague=lambda a: "Can you list all my orders from this year?",
        clarify="Sure - what is your customer id (like CUS-12345)?",
        mutate=swap_enum("status", ("open", "shipped", "delivered", "cancelled")),
    ),
    Tool(
        "search_products",
        "Search the catalogue with optional filters.",
        "read",
        obj(
            {
                "query": text("Free-text search.", minLength=2, maxLength=80),
                "filters": obj(
                    {
                        "category": enum(CATEGORIES, "Catalogue section."),
                        "price": obj(
                            {
                                "min": {"type": "number", "minimum": 0},
                                "max": {"type": "number", "minimum": 0, "maximum": 10000},
                            },
                            [],
                        ),
                        "in_stock": {"type": "boolean"},
                    },
                    [],
                ),
                "sort": enum(("relevance", "price_asc", "price_desc", "rating"), "Order."),
                "page": {"type": "integer", "minimum": 1, "default": 1},
            },
            ["query"],
        ),
        make_search,
        ask_search,
        {"results": [{"sku": "SKU-KET-1002", "name": "Steel kettle", "price": 39.9}], "total": 1},
        lambda a: f"I found one match for {a['query']}: the steel kettle SKU-KET-1002 at 39.90.",
        "SKU-KET-1002",
        mutate=lambda a, r: {**a, "query": a["query"].split()[-1] + "s"},
    ),
    Tool(
        "get_product",
        "Details of one product by SKU.",
        "read",
        obj(
            {
                "sku": SKU_FIELD,
                "locale": text("Language of texts.", pattern=r"^[a-z]{2}-[A-Z]{2}$"),
            },
            ["sku"],
        ),
        lambda r: {
            "sku": sku(r),
            **({"locale": r.choice(["en-GB", "de-DE", "fr-FR"])} if r.random() < 0.3 else {}),
        },
        lambda a: (
            f"Tell me more about {a['sku']}"
            + (f" (texts in {a['locale']})" if "locale" in a else "")
            + "."
        ),
        {"name": "Trail shoe", "price": 89.0, "rating": 4.4, "available": True},
        lambda a: f"{a['sku']} is a trail shoe at 89.00, rated 4.4 and available.",
        "available",
        vague=lambda a: "Tell me more about the shoes from your newsletter.",
        clarify="Which product do you mean? A SKU like SKU-ABC-1234 helps.",
        sibling="check_inventory",
    ),
    Tool(
        "check_inventory",
        "Stock of a SKU, optionally in one warehouse.",
        "read",
        obj(
            {
                "sku": SKU_FIELD,
                "warehouse": enum(WAREHOUSES, "Warehouse to check."),
                "quantity": {"type": "integer", "minimum": 1, "maximum": 500},
            },
            ["sku"],
        ),
        lambda r: {
            "sku": sku(r),
            **({"warehouse": r.choice(WAREHOUSES)} if r.random() < 0.5 else {}),
            **({"quantity": r.randrange(1, 60)} if r.random() < 0.5 else {}),
        },
        lambda a: (
            "Is "
            + (f"{a['quantity']}x " if "quantity" in a else "")
            + f"{a['sku']} in stock"
            + (f" in the {a['warehouse']} warehouse" if "warehouse" in a else "")
            + "?"
        ),
        {"in_stock": 42, "restock_date": None},
        lambda a: f"Yes, {a['sku']} is in stock: 42 units available.",
        "in stock",
        mutate=swap_enum("warehouse", WAREHOUSES),
    ),
    Tool(
        "quote_shipping",
        "Price a shipment of one to five parcels between two addresses.",
        "read",
        obj(
            {
                "origin": address_schema(full=False),
                "destination": address_schema(full=False),
                "parcels": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 5,
                    "items": obj(
                        {
                            "weight_kg": {"type": "number", "exclusiveMinimum": 0, "maximum": 70},
                            "dimensions_cm": obj(
                                {
                                    side: {"type": "integer", "minimum": 1, "maximum": 200}
                                    for side in ("length", "width", "height")
                                },
                                ["length", "width", "height"],
                            ),
                        },
                        ["weight_kg"],
                    ),
                },
                "service": enum(("economy", "standard", "express"), "Speed of delivery."),
            },
            ["origin", "destination", "parcels", "service"],
        ),
        make_quote,
        ask_quote,
        {"price": {"value": 18.4, "currency": "EUR"}, "days": 3},
        lambda a: f"{a['service'].capitalize()} shipping costs 18.40 EUR and takes 3 days.",
        "18.40",
        vague=lambda a: f"How much is it to send a parcel to {a['destination']['city']}?",
        clarify="Happy to quote: where from, how heavy, and economy, standard or express?",
        mutate=swap_enum("service", ("economy", "standard", "express")),
        error=None,
    ),
    Tool(
        "track_shipment",
        "Tracking events of a shipment.",
        "read",
        obj(
            {
                "tracking_number": text("Carrier tracking number.", pattern=TRACKING),
                "carrier": enum(CARRIERS, "Carrier, if known."),
            },
            ["tracking_number"],
        ),
        lambda r: {
            "tracking_number": tracking(r),
            **({"carrier": r.choice(CARRIERS)} if r.random() < 0.5 else {}),
        },
        lambda a: (
            f"Track parcel {a['tracking_number']}"
            + (f" ({a['carrier'].upper()})" if "carrier" in a else "")
            + " for me."
        ),
        {"events": [{"at": "2026-05-02T09:14:00Z", "status": "in_transit", "place": "Leipzig"}]},
        lambda a: f"Parcel {a['tracking_number']} is in transit, last seen in Leipzig.",
        "in transit",
        vague=lambda a: "Where is my parcel right now?",
        clarify="Could you share the tracking number or the order id?",
        mutate=swap_enum("carrier", CARRIERS),
    ),
    Tool(
        "get_customer",
        "Profile of a customer by id.",
        "read",
        obj({"customer_id": CUSTOMER}, ["customer_id"]),
        lambda r: {"customer_id": customer_id(r)},
        lambda a: f"What plan and loyalty level does {a['customer_id']} have?",
        {"plan": "plus", "loyalty": "gold", "since": "2021-04-01"},
        lambda a: f"{a['customer_id']} is on the plus plan with gold loyalty status.",
        "gold",
        sibling="list_orders",
    ),
)
