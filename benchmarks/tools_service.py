"""The other twelve tools of the benchmark contract: order changes, refunds, invoices,
currency, store hours, callbacks, tickets, FAQ and subscriptions (synthetic)."""

from __future__ import annotations

import string

from tool_kit import (
    CURRENCIES,
    CUSTOMER,
    DATE,
    ORDER,
    PRODUCT_WORDS,
    SKU_FIELD,
    Tool,
    address,
    address_schema,
    ask_return,
    ask_ticket,
    customer_id,
    day,
    enum,
    make_callback,
    make_return,
    make_ticket,
    money,
    obj,
    order_id,
    scale,
    swap_enum,
    text,
)

SERVICE_TOOLS: tuple[Tool, ...] = (
    Tool(
        "update_address",
        "Change the delivery address of an order that has not shipped yet.",
        "write",
        obj({"order_id": ORDER, "address": address_schema(full=True)}, ["order_id", "address"]),
        lambda r: {"order_id": order_id(r), "address": address(r)},
        lambda a: (
            f"Please change the delivery address of {a['order_id']} to "
            + ", ".join(
                a["address"][k]
                for k in ("line1", "line2", "postal_code", "city", "country")
                if k in a["address"]
            )
            + "."
        ),
        {"updated": True},
        lambda a: f"Done: {a['order_id']} will be delivered to the new address.",
        "new address",
        vague=lambda a: f"I moved, please send {a['order_id']} to my new flat instead.",
        clarify="Of course - what is the new address (street, postal code, city, country)?",
        error=("order_id", "ALREADY_SHIPPED", "The order has left the warehouse"),
    ),
    Tool(
        "cancel_order",
        "Cancel an order. Only when the customer explicitly asks for it.",
        "write",
        obj(
            {
                "order_id": ORDER,
                "reason": enum(("duplicate", "changed_mind", "too_slow", "other"), "Why."),
                "notify_customer": {"type": "boolean", "default": True},
            },
            ["order_id", "reason"],
        ),
        lambda r: {
            "order_id": order_id(r),
            "reason": r.choice(["duplicate", "changed_mind", "too_slow"]),
            **({"notify_customer": False} if r.random() < 0.2 else {}),
        },
        lambda a: (
            f"Cancel {a['order_id']}, "
            + {
                "duplicate": "I ordered it twice",
                "changed_mind": "I changed my mind",
                "too_slow": "it is taking far too long",
            }[a["reason"]]
            + ("; no email needed" if a.get("notify_customer") is False else "")
            + "."
        ),
        {"cancelled": True},
        lambda a: f"Order {a['order_id']} is cancelled.",
        "cancelled",
        vague=lambda a: f"I'm thinking about cancelling {a['order_id']}, what happens then?",
        clarify="If you cancel, the payment is refunded in 3-5 days. Shall I cancel it?",
        mutate=swap_enum("reason", ("duplicate", "changed_mind", "too_slow", "other")),
        error=("order_id", "ALREADY_SHIPPED", "Cancellation after hand-over is not possible"),
    ),
    Tool(
        "create_return",
        "Open a return for items of an order.",
        "write",
        obj(
            {
                "order_id": ORDER,
                "items": {
                    "type": "array",
                    "minItems": 1,
                    "items": obj(
                        {
                            "sku": SKU_FIELD,
                            "quantity": {"type": "integer", "minimum": 1, "maximum": 20},
                            "condition": enum(("unopened", "opened", "damaged"), "State."),
                        },
                        ["sku", "quantity", "condition"],
                    ),
                },
                "refund_method": enum(("original_payment", "store_credit"), "Refund to."),
            },
            ["order_id", "items", "refund_method"],
        ),
        make_return,
        ask_return,
        {"return_id": "RET-5521", "label_url": "https://example.invalid/label/RET-5521"},
        lambda a: f"Return RET-5521 is open for {a['order_id']}; the label is in your email.",
        "RET-5521",
        vague=lambda a: f"I want to send back something from {a['order_id']}.",
        clarify="Which items, how many, and should we refund your card or give store credit?",
        mutate=swap_enum("refund_method", ("original_payment", "store_credit")),
    ),
    Tool(
        "issue_refund",
        "Refund part or all of an order's payment.",
        "write",
        obj(
            {
                "order_id": ORDER,
                "amount": obj(
                    {
                        "value": {"type": "number", "exclusiveMinimum": 0, "maximum": 5000},
                        "currency": enum(CURRENCIES, "ISO currency."),
                    },
                    ["value", "currency"],
                ),
                "reason": text("Short reason.", maxLength=200),
            },
            ["order_id", "amount", "reason"],
        ),
        lambda r: {
            "order_id": order_id(r),
            "amount": {"value": money(r), "currency": r.choice(CURRENCIES)},
            "reason": r.choice(["late delivery", "damaged item", "price match"]),
        },
        lambda a: (
            f"Refund {a['amount']['value']} {a['amount']['currency']} on {a['order_id']} "
            f"because of {a['reason']}."
        ),
        {"refund_id": "RF-8812", "status": "pending"},
        lambda a: f"Refund RF-8812 of {a['amount']['value']} {a['amount']['currency']} is pending.",
        "pending",
        vague=lambda a: f"I want my money back for {a['order_id']}.",
        clarify="I can help - how much should be refunded, and why?",
        mutate=lambda a, r: {
            **a,
            "amount": {**a["amount"], "value": round(a["amount"]["value"] * 10, 2)},
        },
        error=("order_id", "REFUND_LIMIT", "Refunds above the order total are not allowed"),
    ),
    Tool(
        "apply_coupon",
        "Apply a coupon code to an open order.",
        "write",
        obj(
            {"order_id": ORDER, "code": text("Coupon code.", pattern=r"^[A-Z0-9]{6,12}$")},
            ["order_id", "code"],
        ),
        lambda r: {
            "order_id": order_id(r),
            "code": "".join(r.choice(string.ascii_uppercase + string.digits) for _ in range(8)),
        },
        lambda a: f"Apply coupon {a['code']} to {a['order_id']} please.",
        {"discount": {"value": 5.0, "currency": "EUR"}},
        lambda a: f"Coupon {a['code']} saved you 5.00 EUR on {a['order_id']}.",
        "saved",
        vague=lambda a: f"I have a coupon for {a['order_id']}, can you use it?",
        clarify="Sure - what is the coupon code?",
        error=("order_id", "COUPON_EXPIRED", "The coupon has expired"),
    ),
    Tool(
        "get_invoice",
        "Invoice of an order as a download link.",
        "read",
        obj({"order_id": ORDER, "format": enum(("pdf", "html"), "File format.")}, ["order_id"]),
        lambda r: {
            "order_id": order_id(r),
            **({"format": r.choice(["pdf", "html"])} if r.random() < 0.5 else {}),
        },
        lambda a: (
            f"Send me the invoice for {a['order_id']}"
            + (f" as {a['format'].upper()}" if "format" in a else "")
            + "."
        ),
        {"url": "https://example.invalid/invoice/INV-3001"},
        lambda a: f"Here is the invoice for {a['order_id']}: INV-3001 (download link sent).",
        "INV-3001",
        sibling="get_order",
    ),
    Tool(
        "convert_currency",
        "Convert an amount between currencies at today's rate.",
        "read",
        obj(
            {
                "amount": {"type": "number", "minimum": 0},
                "from": enum(CURRENCIES, "Source currency."),
                "to": enum(CURRENCIES, "Target currency."),
            },
            ["amount", "from", "to"],
        ),
        lambda r: dict(
            zip(("from", "to"), r.sample(CURRENCIES, 2), strict=True), amount=money(r, 2000)
        ),
        lambda a: f"How much is {a['amount']} {a['from']} in {a['to']}?",
        {"converted": 123.45, "rate": 1.0871},
        lambda a: f"{a['amount']} {a['from']} is about 123.45 {a['to']} (rate 1.0871).",
        "123.45",
        mutate=scale("amount", 100),
    ),
    Tool(
        "get_store_hours",
        "Opening hours of a store on a date.",
        "read",
        obj(
            {
                "store_id": text("Store id like ST-123.", pattern=r"^ST-[0-9]{3}$"),
                "date": text("Day to check (default today).", pattern=DATE),
            },
            ["store_id"],
        ),
        lambda r: {
            "store_id": f"ST-{r.randrange(100, 1000)}",
            **({"date": day(r)} if r.random() < 0.6 else {}),
        },
        lambda a: (
            f"When is store {a['store_id']} open"
            + (f" on {a['date']}" if "date" in a else " today")
            + "?"
        ),
        {"open": "09:00", "close": "20:00"},
        lambda a: f"Store {a['store_id']} is open from 09:00 to 20:00.",
        "09:00",
        vague=lambda a: "When does your shop near the station open?",
        clarify="Which store do you mean? Store ids look like ST-123.",
    ),
    Tool(
        "schedule_callback",
        "Book a phone callback from the support team.",
        "write",
        obj(
            {
                "customer_id": CUSTOMER,
                "phone": text("Phone in E.164.", pattern=r"^\+[1-9][0-9]{7,14}$"),
                "window": obj(
                    {
                        "date": text("Day of the call.", pattern=DATE),
                        "slot": enum(("morning", "afternoon", "evening"), "Part of the day."),
                    },
                    ["date", "slot"],
                ),
                "topic": enum(("order", "return", "billing", "other"), "What it is about."),
            },
            ["customer_id", "phone", "window", "topic"],
        ),
        make_callback,
        lambda a: (
            f"Call me back about {a['topic']} on {a['window']['date']} in the "
            f"{a['window']['slot']} at {a['phone']}, I'm {a['customer_id']}."
        ),
        {"booked": True, "reference": "CB-7710"},
        lambda a: f"Callback CB-7710 is booked for {a['window']['date']} ({a['window']['slot']}).",
        "CB-7710",
        vague=lambda a: f"Can someone call me about my {a['topic']} question?",
        clarify="Sure - which number, which day, and morning, afternoon or evening?",
        mutate=swap_enum("topic", ("order", "return", "billing", "other")),
    ),
    Tool(
        "create_support_ticket",
        "Open a support ticket.",
        "write",
        obj(
            {
                "customer_id": CUSTOMER,
                "subject": text("One-line summary.", minLength=5, maxLength=120),
                "priority": enum(("low", "normal", "high", "urgent"), "Urgency."),
                "category": enum(("delivery", "product", "billing", "account"), "Area."),
                "order_id": ORDER,
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 20},
                    "maxItems": 5,
                },
            },
            ["customer_id", "subject", "priority", "category"],
        ),
        make_ticket,
        ask_ticket,
        {"ticket_id": "TCK-4410"},
        lambda a: f"Ticket TCK-4410 is open with {a['priority']} priority.",
        "TCK-4410",
        mutate=swap_enum("priority", ("low", "normal", "high", "urgent")),
    ),
    Tool(
        "search_faq",
        "Search the help centre articles.",
        "read",
        obj(
            {
                "query": text("Question in the customer's words.", minLength=3, maxLength=200),
                "language": enum(("en", "de", "fr", "pl"), "Article language."),
                "max_results": {"type": "integer", "minimum": 1, "maximum": 10},
            },
            ["query"],
        ),
        lambda r: {
            "query": r.choice(
                ["how long do refunds take", "can I change my delivery day", "gift wrapping"]
            )
            + f" for {r.choice(PRODUCT_WORDS)}s",
            **({"language": r.choice(["en", "de", "fr", "pl"])} if r.random() < 0.4 else {}),
            **({"max_results": r.randrange(1, 11)} if r.random() < 0.3 else {}),
        },
        lambda a: (
            f"Look up in the help centre: {a['query']}"
            + (f" (in {a['language']})" if "language" in a else "")
            + "."
        ),
        {"articles": [{"id": "FAQ-12", "title": "Refund times"}]},
        lambda a: "The help article FAQ-12 answers that.",
        "FAQ-12",
    ),
    Tool(
        "update_subscription",
        "Change a customer's membership plan.",
        "write",
        obj(
            {
                "customer_id": CUSTOMER,
                "plan": enum(("basic", "plus", "premium"), "New plan."),
                "billing_cycle": enum(("monthly", "yearly"), "Billing period."),
                "auto_renew": {"type": "boolean"},
            },
            ["customer_id", "plan", "billing_cycle"],
        ),
        lambda r: {
            "customer_id": customer_id(r),
            "plan": r.choice(["basic", "plus", "premium"]),
            "billing_cycle": r.choice(["monthly", "yearly"]),
            **({"auto_renew": r.random() < 0.5} if r.random() < 0.5 else {}),
        },
        lambda a: (
            f"Switch {a['customer_id']} to {a['plan']}, billed {a['billing_cycle']}"
            + (
                {True: ", with auto-renew", False: ", no auto-renew"}[a["auto_renew"]]
                if "auto_renew" in a
                else ""
            )
            + "."
        ),
        {"plan": "updated"},
        lambda a: f"{a['customer_id']} is now on {a['plan']} ({a['billing_cycle']}), plan updated.",
        "updated",
        vague=lambda a: "I'd like a cheaper membership.",
        clarify="Which plan would you like (basic, plus or premium), monthly or yearly?",
        mutate=swap_enum("billing_cycle", ("monthly", "yearly")),
    ),
)
