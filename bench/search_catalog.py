# ruff: noqa: E501 - a data table: one tool or intent a line reads best
"""A realistic tenant catalog for the tool-search benchmark, as real app bundles, and labelled intents.

25 apps across business domains (billing, quotes, purchasing, payments, subscriptions, CRM, support,
HR, payroll, leave, recruiting, inventory, shipping, orders, projects, timesheets, expenses, IT
assets, helpdesk, legal, marketing, facilities, knowledge base, audit, fleet), 10 of them behind roles.
Each app has record-style tools for its entities (search, get, create, update, delete: the near
duplicates real catalogs are full of, e.g. create invoice / create quote / create purchase order)
and hand-written actions (cancel vs refund, approve, send, ...). A few actions declare manifest
``keywords``, as a developer would for jargon.

Intents are written as users ask, avoiding the gold tool's description words where a user would:
paraphrases, synonyms, a few typos, and some asked by a user who lacks the gold tool's role, where
the right answer is that no tool fits (``gold`` is still named, to check it never comes back).
"""

from __future__ import annotations

from dataclasses import dataclass

HANDLER = {"server/handle.py": "def handle(request):\n    return {'ok': True}\n"}


@dataclass(frozen=True)
class Entity:
    singular: str  # "invoice"
    plural: str
    about: str  # one sentence: what it is
    fields: dict[str, str]  # argument name -> description


@dataclass(frozen=True)
class Action:
    name: str
    title: str
    description: str
    arguments: dict[str, str]
    read_only: bool = False
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class AppSpec:
    name: str
    title: str
    description: str
    access: str  # "user" or "role:..."
    entities: tuple[Entity, ...]
    actions: tuple[Action, ...]


def E(singular, plural, about, /, **fields):  # noqa: N802 - a table constructor
    return Entity(singular, plural, about, fields)


def A(name, title, description, /, read_only=False, keywords=(), **arguments):  # noqa: N802
    return Action(name, title, description, arguments, read_only, tuple(keywords))


APPS: tuple[AppSpec, ...] = (
    AppSpec(
        "billing",
        "Billing",
        "Invoices sent to customers and their collection.",
        "role:finance",
        (
            E(
                "invoice",
                "invoices",
                "An invoice bills a customer for delivered goods or services.",
                customer_id="The customer billed.",
                line_items="Items with quantity and unit price.",
                due_date="Date the payment is due.",
                currency="ISO currency code.",
            ),
            E(
                "credit_note",
                "credit notes",
                "A credit note reduces what a customer owes on an invoice.",
                invoice_id="The invoice corrected.",
                amount="Amount credited.",
                reason="Why it is credited.",
            ),
        ),
        (
            A(
                "send_invoice",
                "Send invoice",
                "Email an issued invoice as PDF to the customer's billing contact.",
                invoice_id="The invoice to send.",
                message="Optional cover note.",
            ),
            A(
                "mark_invoice_paid",
                "Mark invoice paid",
                "Record that an invoice was settled in full.",
                invoice_id="The invoice.",
                paid_on="Date of settlement.",
            ),
            A(
                "send_payment_reminder",
                "Send payment reminder",
                "Remind a customer about an overdue invoice by email.",
                keywords=("dunning", "chase payment"),
                invoice_id="The overdue invoice.",
            ),
            A(
                "overdue_report",
                "Overdue invoices report",
                "Summarise unpaid invoices past their due date by customer.",
                read_only=True,
                as_of="Date to age the invoices at.",
            ),
            A(
                "void_invoice",
                "Void invoice",
                "Cancel an issued invoice so it no longer counts as receivable.",
                invoice_id="The invoice to void.",
                reason="Why it is voided.",
            ),
        ),
    ),
    AppSpec(
        "quotes",
        "Quotes",
        "Price quotes for prospects before a sale is agreed.",
        "user",
        (
            E(
                "quote",
                "quotes",
                "A quote offers a price for goods or services to a prospect; it is not a bill.",
                customer_id="The prospect or customer.",
                line_items="Items with quantity and unit price.",
                valid_until="Last day the offer holds.",
                currency="ISO currency code.",
            ),
        ),
        (
            A(
                "send_quote",
                "Send quote",
                "Email a quote to the prospect for acceptance.",
                quote_id="The quote.",
                message="Optional cover note.",
            ),
            A(
                "accept_quote",
                "Accept quote",
                "Mark a quote as accepted by the customer and open an order.",
                quote_id="The quote.",
            ),
            A(
                "decline_quote",
                "Decline quote",
                "Mark a quote as declined by the customer, with a reason.",
                quote_id="The quote.",
                reason="Why the customer declined.",
            ),
            A(
                "duplicate_quote",
                "Duplicate quote",
                "Copy an existing quote as a new draft.",
                quote_id="The quote.",
            ),
            A(
                "quote_pdf",
                "Quote PDF",
                "Render a quote as a PDF document.",
                read_only=True,
                quote_id="The quote.",
            ),
        ),
    ),
    AppSpec(
        "purchasing",
        "Purchasing",
        "Purchase orders to suppliers and their approval.",
        "role:procurement",
        (
            E(
                "purchase_order",
                "purchase orders",
                "A purchase order commits to buy goods from a supplier.",
                supplier_id="The supplier.",
                line_items="Items with quantity and unit price.",
                delivery_date="Expected delivery date.",
            ),
            E(
                "supplier",
                "suppliers",
                "A supplier (vendor) the company buys from.",
                name="Company name.",
                tax_id="VAT or tax number.",
                contact_email="Ordering contact.",
            ),
        ),
        (
            A(
                "approve_purchase_order",
                "Approve purchase order",
                "Approve a purchase order above the spending limit.",
                purchase_order_id="The purchase order.",
            ),
            A(
                "send_purchase_order",
                "Send purchase order",
                "Transmit an approved purchase order to the supplier.",
                purchase_order_id="The purchase order.",
            ),
            A(
                "receive_goods",
                "Receive goods",
                "Record goods received against a purchase order.",
                purchase_order_id="The purchase order.",
                quantities="Received quantity per line.",
            ),
            A(
                "match_supplier_bill",
                "Match supplier bill",
                "Match a supplier's bill to its purchase order and goods receipt before paying.",
                keywords=("three-way match", "vendor invoice"),
                purchase_order_id="The purchase order.",
                bill_number="The supplier's bill number.",
            ),
        ),
    ),
    AppSpec(
        "payments",
        "Payments",
        "Card and bank payments received from customers.",
        "role:finance",
        (
            E(
                "payment",
                "payments",
                "A payment received from a customer by card or bank transfer.",
                customer_id="The payer.",
                amount="Amount received.",
                method="card or transfer.",
            ),
        ),
        (
            A(
                "refund_payment",
                "Refund payment",
                "Return a received payment to the customer, fully or in part.",
                keywords=("reimburse", "money back", "chargeback"),
                payment_id="The payment.",
                amount="Amount to return; all if omitted.",
            ),
            A(
                "capture_payment",
                "Capture payment",
                "Capture a card payment that was only authorised.",
                payment_id="The authorised payment.",
            ),
            A(
                "payment_link",
                "Create payment link",
                "Create a link a customer can open to pay online.",
                amount="Amount to collect.",
                customer_id="The customer.",
            ),
            A(
                "payout_report",
                "Payout report",
                "List bank payouts of the payment provider over a period.",
                read_only=True,
                start="Start date.",
                end="End date.",
            ),
            A(
                "dispute_status",
                "Dispute status",
                "Show the state of a card dispute opened by a cardholder.",
                read_only=True,
                payment_id="The disputed payment.",
            ),
        ),
    ),
    AppSpec(
        "subscriptions",
        "Subscriptions",
        "Recurring plans customers subscribe to.",
        "user",
        (
            E(
                "subscription",
                "subscriptions",
                "A customer's recurring plan, billed each period.",
                customer_id="The subscriber.",
                plan="Plan name.",
                seats="Number of seats.",
            ),
            E(
                "plan",
                "plans",
                "A price plan customers can subscribe to.",
                name="Plan name.",
                monthly_price="Price per month.",
                features="What it includes.",
            ),
        ),
        (
            A(
                "cancel_subscription",
                "Cancel subscription",
                "End a customer's subscription at the end of its period.",
                subscription_id="The subscription.",
                reason="Why it ends.",
            ),
            A(
                "pause_subscription",
                "Pause subscription",
                "Suspend billing of a subscription for some months.",
                subscription_id="The subscription.",
                months="How many months.",
            ),
            A(
                "change_plan",
                "Change plan",
                "Move a subscription to another plan (upgrade or downgrade).",
                subscription_id="The subscription.",
                plan="The new plan.",
            ),
            A(
                "renewals_due",
                "Renewals due",
                "List subscriptions renewing in the coming days.",
                read_only=True,
                days="How many days ahead.",
            ),
        ),
    ),
    AppSpec(
        "crm",
        "CRM",
        "Customers, contacts, leads and deals.",
        "user",
        (
            E(
                "contact",
                "contacts",
                "A person at a customer or prospect.",
                first_name="Given name.",
                last_name="Family name.",
                email="Email address.",
                company="Company.",
            ),
            E(
                "deal",
                "deals",
                "A sales opportunity with an expected value and stage.",
                company="Company.",
                value="Expected value.",
                stage="Pipeline stage.",
            ),
        ),
        (
            A(
                "log_call",
                "Log call",
                "Record a phone call with a contact and its outcome.",
                contact_id="The contact.",
                notes="What was said.",
            ),
            A(
                "convert_lead",
                "Convert lead",
                "Turn a qualified lead into a contact and a deal.",
                lead_id="The lead.",
            ),
            A(
                "pipeline_summary",
                "Pipeline summary",
                "Total deal value per stage for a sales rep.",
                read_only=True,
                owner="The sales rep.",
            ),
            A(
                "merge_contacts",
                "Merge contacts",
                "Merge two duplicate contacts into one.",
                keep_id="Contact kept.",
                merge_id="Contact merged into it.",
            ),
        ),
    ),
    AppSpec(
        "support",
        "Support",
        "Customer support tickets.",
        "user",
        (
            E(
                "ticket",
                "tickets",
                "A customer's support request with its conversation.",
                subject="Short summary.",
                customer_id="The customer.",
                priority="low, normal, high or urgent.",
            ),
            E(
                "saved_reply",
                "saved replies",
                "A canned answer agents reuse on tickets.",
                title="Name of the reply.",
                body="Text of the reply.",
            ),
        ),
        (
            A(
                "assign_ticket",
                "Assign ticket",
                "Give a ticket to an agent or a team.",
                ticket_id="The ticket.",
                assignee="Agent or team.",
            ),
            A(
                "escalate_ticket",
                "Escalate ticket",
                "Raise a ticket to the second-level team with higher priority.",
                ticket_id="The ticket.",
            ),
            A(
                "reply_to_ticket",
                "Reply to ticket",
                "Send a reply to the customer on a ticket.",
                ticket_id="The ticket.",
                body="The reply.",
            ),
            A("close_ticket", "Close ticket", "Mark a ticket solved and close it.", ticket_id="The ticket."),
            A(
                "sla_breaches",
                "SLA breaches",
                "List tickets that missed their response-time target.",
                read_only=True,
                team="Team.",
            ),
        ),
    ),
    AppSpec(
        "hr",
        "People",
        "Employee records, org chart and onboarding.",
        "role:hr",
        (
            E(
                "employee",
                "employees",
                "A person employed by the company, with job and manager.",
                full_name="Full name.",
                job_title="Job title.",
                manager_id="Their manager.",
                start_date="First day.",
            ),
        ),
        (
            A(
                "start_onboarding",
                "Start onboarding",
                "Open the onboarding checklist for a new hire.",
                employee_id="The new hire.",
            ),
            A(
                "start_offboarding",
                "Start offboarding",
                "Open the leaver checklist when someone leaves.",
                employee_id="The leaver.",
                last_day="Last working day.",
            ),
            A(
                "change_manager",
                "Change manager",
                "Move an employee under another manager.",
                employee_id="The employee.",
                manager_id="The new manager.",
            ),
            A(
                "headcount_report",
                "Headcount report",
                "Count employees per department and location.",
                read_only=True,
                department="Department.",
            ),
            A(
                "record_performance_review",
                "Record performance review",
                "Store an employee's yearly appraisal and rating.",
                employee_id="The employee.",
                rating="Rating 1 to 5.",
                summary="Review text.",
            ),
        ),
    ),
    AppSpec(
        "payroll",
        "Payroll",
        "Salaries and payslips.",
        "role:payroll",
        (
            E(
                "salary",
                "salaries",
                "An employee's pay rate and bank details.",
                employee_id="The employee.",
                annual_amount="Gross yearly pay.",
                iban="Bank account.",
            ),
        ),
        (
            A(
                "run_payroll",
                "Run payroll",
                "Calculate and pay all salaries for a month.",
                keywords=("wages",),
                month="The month paid.",
            ),
            A(
                "payslip",
                "Payslip",
                "Produce an employee's payslip for a month.",
                read_only=True,
                employee_id="The employee.",
                month="The month.",
            ),
            A(
                "add_bonus",
                "Add bonus",
                "Add a one-off bonus to an employee's next pay.",
                employee_id="The employee.",
                amount="Bonus amount.",
            ),
            A(
                "tax_filing",
                "Payroll tax filing",
                "Prepare the monthly payroll tax return.",
                month="The month.",
            ),
        ),
    ),
    AppSpec(
        "leave",
        "Time off",
        "Holidays, sick days and absence.",
        "user",
        (
            E(
                "leave_request",
                "leave requests",
                "A request for days away from work.",
                start="First day away.",
                end="Last day away.",
                kind="vacation, sick or unpaid.",
            ),
            E(
                "public_holiday",
                "public holidays",
                "A bank holiday when an office is closed.",
                date="Day.",
                office="Office.",
                name="Holiday name.",
            ),
        ),
        (
            A(
                "approve_leave",
                "Approve leave",
                "Approve a team member's leave request.",
                request_id="The request.",
            ),
            A(
                "leave_balance",
                "Leave balance",
                "Show how many days off remain this year.",
                read_only=True,
                employee_id="The employee; yourself if omitted.",
            ),
            A(
                "report_sick",
                "Report sick",
                "Tell your manager you are ill and will not work today.",
                days="Expected days away.",
            ),
            A(
                "team_calendar",
                "Team absence calendar",
                "Show who in a team is away on which days.",
                read_only=True,
                team="The team.",
                month="The month.",
            ),
        ),
    ),
    AppSpec(
        "recruiting",
        "Recruiting",
        "Job openings, candidates and interviews.",
        "role:hr,recruiter",
        (
            E(
                "job_opening",
                "job openings",
                "A position the company is hiring for.",
                title="Job title.",
                department="Department.",
                location="Office or remote.",
            ),
            E(
                "candidate",
                "candidates",
                "An applicant for a job opening.",
                full_name="Full name.",
                email="Email.",
                opening_id="The job applied for.",
            ),
        ),
        (
            A(
                "schedule_interview",
                "Schedule interview",
                "Book an interview slot with a candidate and panel.",
                candidate_id="The candidate.",
                when="Date and time.",
                interviewers="Panel members.",
            ),
            A(
                "send_offer",
                "Send offer letter",
                "Send a job offer to a candidate.",
                candidate_id="The candidate.",
                salary="Offered salary.",
            ),
            A(
                "reject_candidate",
                "Reject candidate",
                "Decline an applicant with a polite email.",
                candidate_id="The candidate.",
            ),
        ),
    ),
    AppSpec(
        "inventory",
        "Inventory",
        "Stock levels of products in warehouses.",
        "user",
        (
            E(
                "product",
                "products",
                "An item the company stocks and sells.",
                sku="Stock keeping unit.",
                name="Product name.",
                price="List price.",
            ),
            E(
                "warehouse",
                "warehouses",
                "A site where stock is stored.",
                name="Name.",
                city="City.",
                manager="Site manager.",
            ),
        ),
        (
            A(
                "stock_level",
                "Stock level",
                "How many units of a product are on hand per warehouse.",
                read_only=True,
                sku="The product.",
            ),
            A(
                "adjust_stock",
                "Adjust stock",
                "Correct the counted quantity of a product after a stocktake.",
                sku="The product.",
                quantity="Counted quantity.",
                warehouse="Warehouse.",
            ),
            A(
                "transfer_stock",
                "Transfer stock",
                "Move units of a product between warehouses.",
                sku="The product.",
                quantity="Units.",
                source="From warehouse.",
                target="To warehouse.",
            ),
            A(
                "reorder_suggestions",
                "Reorder suggestions",
                "Products below their reorder point.",
                read_only=True,
                warehouse="Warehouse.",
            ),
        ),
    ),
    AppSpec(
        "shipping",
        "Shipping",
        "Parcels and deliveries to customers.",
        "user",
        (
            E(
                "shipment",
                "shipments",
                "A parcel sent to a customer with a carrier.",
                order_id="The order shipped.",
                carrier="Carrier.",
                address="Delivery address.",
            ),
            E(
                "address",
                "addresses",
                "A saved delivery address of a customer.",
                customer_id="The customer.",
                street="Street.",
                city="City.",
                country="Country.",
            ),
        ),
        (
            A(
                "track_shipment",
                "Track shipment",
                "Where a parcel is now, from the carrier's tracking.",
                read_only=True,
                tracking_number="Carrier tracking number.",
            ),
            A(
                "print_label",
                "Print shipping label",
                "Create a carrier label for a shipment.",
                shipment_id="The shipment.",
            ),
            A(
                "schedule_pickup",
                "Schedule pickup",
                "Ask the carrier to collect parcels at the warehouse.",
                carrier="Carrier.",
                date="Pickup date.",
            ),
            A(
                "shipping_rates",
                "Shipping rates",
                "Compare carrier prices for a parcel.",
                read_only=True,
                weight="Weight in kg.",
                destination="Destination country.",
            ),
        ),
    ),
    AppSpec(
        "orders",
        "Orders",
        "Customer orders from the web shop.",
        "user",
        (
            E(
                "order",
                "orders",
                "A customer's order of products from the shop.",
                customer_id="The customer.",
                items="Products and quantities.",
                shipping_address="Address.",
            ),
            E(
                "discount_code",
                "discount codes",
                "A coupon that lowers the price at checkout.",
                code="The code.",
                percent="Percent off.",
                expires="Expiry date.",
            ),
        ),
        (
            A(
                "cancel_order",
                "Cancel order",
                "Cancel an order that has not shipped yet.",
                order_id="The order.",
                reason="Why it is cancelled.",
            ),
            A(
                "return_order",
                "Start return",
                "Open a return for delivered items (a refund follows receipt).",
                keywords=("RMA", "send back"),
                order_id="The order.",
                items="Items returned.",
            ),
            A(
                "order_status",
                "Order status",
                "Where an order stands: paid, packed, shipped or delivered.",
                read_only=True,
                order_id="The order.",
            ),
            A(
                "resend_confirmation",
                "Resend confirmation",
                "Email the order confirmation again.",
                order_id="The order.",
            ),
        ),
    ),
    AppSpec(
        "projects",
        "Projects",
        "Client projects, tasks and milestones.",
        "user",
        (
            E(
                "project",
                "projects",
                "A piece of client work with a budget and deadline.",
                name="Project name.",
                client="Client.",
                deadline="Due date.",
            ),
            E(
                "task",
                "tasks",
                "A to-do item within a project.",
                title="What to do.",
                project_id="The project.",
                assignee="Who does it.",
                due="Due date.",
            ),
        ),
        (
            A(
                "project_status",
                "Project status",
                "Progress, budget used and risks of a project.",
                read_only=True,
                project_id="The project.",
            ),
            A("complete_task", "Complete task", "Mark a task done.", task_id="The task."),
            A(
                "add_milestone",
                "Add milestone",
                "Add a dated milestone to a project.",
                project_id="The project.",
                name="Milestone.",
                date="Date.",
            ),
        ),
    ),
    AppSpec(
        "timesheets",
        "Timesheets",
        "Hours worked per project.",
        "user",
        (
            E(
                "time_entry",
                "time entries",
                "Hours a person worked on a project on a day.",
                project_id="The project.",
                hours="Hours worked.",
                date="Day.",
                note="What was done.",
            ),
            E(
                "billing_rate",
                "billing rates",
                "The hourly rate charged for a role on a project.",
                project_id="The project.",
                role="Role.",
                hourly_rate="Rate per hour.",
            ),
        ),
        (
            A(
                "submit_timesheet",
                "Submit timesheet",
                "Send your week's hours for approval.",
                week="The week.",
            ),
            A(
                "approve_timesheet",
                "Approve timesheet",
                "Approve a team member's weekly hours.",
                timesheet_id="The timesheet.",
            ),
            A(
                "utilisation_report",
                "Utilisation report",
                "Billable hours as a share of hours worked per person.",
                read_only=True,
                month="The month.",
            ),
        ),
    ),
    AppSpec(
        "expenses",
        "Expenses",
        "Employee expense claims and receipts.",
        "user",
        (
            E(
                "expense_claim",
                "expense claims",
                "Money an employee spent for work and wants paid back.",
                amount="Amount spent.",
                category="travel, meals, equipment or other.",
                receipt_url="Receipt.",
            ),
            E(
                "corporate_card",
                "corporate cards",
                "A company credit card issued to an employee.",
                holder_id="Card holder.",
                monthly_limit="Spending limit per month.",
            ),
        ),
        (
            A(
                "submit_expense_claim",
                "Submit expense claim",
                "Send an expense claim to your manager.",
                claim_id="The claim.",
            ),
            A(
                "approve_expense_claim",
                "Approve expense claim",
                "Approve a team member's expense claim.",
                claim_id="The claim.",
            ),
            A(
                "mileage_claim",
                "Mileage claim",
                "Claim driving distance for work at the standard rate.",
                kilometres="Distance driven.",
                purpose="Trip purpose.",
            ),
            A(
                "per_diem_rates",
                "Per diem rates",
                "Daily travel allowance by country.",
                read_only=True,
                country="Country.",
            ),
        ),
    ),
    AppSpec(
        "assets",
        "IT assets",
        "Laptops, phones and licences issued to staff.",
        "role:it",
        (
            E(
                "device",
                "devices",
                "A laptop, phone or monitor owned by the company.",
                serial_number="Serial number.",
                model="Model.",
                holder_id="Employee holding it.",
            ),
            E(
                "licence",
                "licences",
                "A software licence seat.",
                product="Software.",
                seats="Seats.",
                renewal_date="Renewal date.",
            ),
        ),
        (
            A(
                "assign_device",
                "Assign device",
                "Hand a device to an employee.",
                device_id="The device.",
                employee_id="The employee.",
            ),
            A(
                "wipe_device",
                "Wipe device",
                "Erase a lost or returned device remotely.",
                device_id="The device.",
            ),
        ),
    ),
    AppSpec(
        "helpdesk",
        "IT helpdesk",
        "Requests to the IT team.",
        "user",
        (
            E(
                "it_request",
                "IT requests",
                "A request to the IT team for help or access.",
                summary="What is needed.",
                urgency="low, normal or high.",
            ),
            E(
                "known_issue",
                "known issues",
                "A problem IT knows about, with its workaround.",
                title="Issue.",
                workaround="What to do meanwhile.",
            ),
        ),
        (
            A(
                "reset_password",
                "Reset password",
                "Send a password reset link for your account.",
                account="The account.",
            ),
            A(
                "request_access",
                "Request access",
                "Ask for access to a system or shared folder.",
                system="The system.",
                reason="Why.",
            ),
            A(
                "report_outage",
                "Report outage",
                "Tell IT that a service is down for many people.",
                service="The service.",
                details="What happens.",
            ),
            A(
                "request_software",
                "Request software",
                "Ask for a program to be installed on your computer.",
                product="The program.",
            ),
        ),
    ),
    AppSpec(
        "legal",
        "Legal",
        "Contracts, NDAs and legal review.",
        "role:legal",
        (
            E(
                "contract",
                "contracts",
                "A signed agreement with a customer, supplier or partner.",
                counterparty="The other party.",
                kind="Contract type.",
                end_date="Expiry date.",
            ),
        ),
        (
            A(
                "draft_nda",
                "Draft NDA",
                "Prepare a non-disclosure agreement from the standard template.",
                keywords=("confidentiality agreement",),
                counterparty="The other party.",
            ),
            A(
                "request_signature",
                "Request e-signature",
                "Send a contract for electronic signature.",
                contract_id="The contract.",
                signers="Who signs.",
            ),
            A(
                "expiring_contracts",
                "Expiring contracts",
                "Contracts ending in the coming months.",
                read_only=True,
                months="Months ahead.",
            ),
            A(
                "legal_review",
                "Request legal review",
                "Ask the legal team to review a document.",
                document_url="The document.",
                deadline="Needed by.",
            ),
        ),
    ),
    AppSpec(
        "marketing",
        "Marketing",
        "Campaigns, newsletters and audiences.",
        "role:marketing",
        (
            E(
                "campaign",
                "campaigns",
                "A marketing campaign with budget and channel.",
                name="Name.",
                channel="email, social or ads.",
                budget="Budget.",
            ),
            E(
                "newsletter",
                "newsletters",
                "An email newsletter to a mailing list.",
                subject="Subject line.",
                audience_id="The mailing list.",
                body="Content.",
            ),
        ),
        (
            A(
                "send_newsletter",
                "Send newsletter",
                "Send a newsletter to its audience now or at a time.",
                newsletter_id="The newsletter.",
                send_at="When.",
            ),
            A(
                "campaign_performance",
                "Campaign performance",
                "Opens, clicks and conversions of a campaign.",
                read_only=True,
                campaign_id="The campaign.",
            ),
            A(
                "unsubscribe_contact",
                "Unsubscribe contact",
                "Remove an email address from all mailing lists.",
                keywords=("opt out", "GDPR"),
                email="The address.",
            ),
        ),
    ),
    AppSpec(
        "facilities",
        "Facilities",
        "Offices, meeting rooms and maintenance.",
        "user",
        (
            E(
                "room_booking",
                "room bookings",
                "A reservation of a meeting room.",
                room="Room.",
                start="Start time.",
                end="End time.",
                attendees="People invited.",
            ),
            E(
                "parking_spot",
                "parking spots",
                "A reserved parking place at an office.",
                spot="Spot number.",
                holder_id="Who may park there.",
            ),
        ),
        (
            A(
                "find_free_room",
                "Find free room",
                "Meeting rooms available at a time for a group size.",
                read_only=True,
                start="Start time.",
                people="Group size.",
            ),
            A(
                "report_maintenance",
                "Report maintenance issue",
                "Report something broken in the office.",
                location="Where.",
                problem="What is broken.",
            ),
            A(
                "visitor_pass",
                "Register visitor",
                "Register a guest at reception and print a badge.",
                visitor_name="Guest's name.",
                visit_date="Date.",
            ),
            A("desk_booking", "Book desk", "Reserve a hot desk for a day.", date="Day.", floor="Floor."),
        ),
    ),
    AppSpec(
        "knowledge",
        "Knowledge base",
        "Internal articles and how-to guides.",
        "user",
        (
            E(
                "article",
                "articles",
                "An internal how-to or policy page.",
                title="Title.",
                body="Content.",
                tags="Tags.",
            ),
            E(
                "faq",
                "FAQs",
                "A frequently asked question and its answer.",
                question="The question.",
                answer="The answer.",
            ),
        ),
        (
            A(
                "ask_policy",
                "Look up policy",
                "Find the company policy that answers a question.",
                read_only=True,
                question="The question.",
            ),
            A(
                "publish_article",
                "Publish article",
                "Make a draft article visible to everyone.",
                article_id="The article.",
            ),
        ),
    ),
    AppSpec(
        "audit",
        "Audit",
        "Compliance checks and the audit trail.",
        "role:audit",
        (
            E(
                "finding",
                "findings",
                "An audit finding with its severity and owner.",
                title="Finding.",
                severity="low, medium or high.",
                owner="Who fixes it.",
            ),
        ),
        (
            A(
                "access_log",
                "Access log",
                "Who viewed or changed a record, and when.",
                read_only=True,
                record_id="The record.",
            ),
            A(
                "export_audit_trail",
                "Export audit trail",
                "Download all changes in a period as CSV.",
                read_only=True,
                start="Start.",
                end="End.",
            ),
            A(
                "close_finding",
                "Close finding",
                "Mark an audit finding fixed with evidence.",
                finding_id="The finding.",
                evidence_url="Evidence.",
            ),
        ),
    ),
    AppSpec(
        "fleet",
        "Fleet",
        "Company cars and their bookings.",
        "user",
        (
            E(
                "car_booking",
                "car bookings",
                "A reservation of a pool car.",
                car_id="The car.",
                start="Start.",
                end="End.",
                destination="Where to.",
            ),
            E(
                "car",
                "cars",
                "A company car in the pool.",
                plate="Licence plate.",
                model="Model.",
                mileage="Kilometres driven.",
            ),
        ),
        (
            A(
                "log_fuel",
                "Log fuel",
                "Record a fuel purchase for a company car.",
                car_id="The car.",
                litres="Litres.",
                cost="Cost.",
            ),
            A(
                "report_damage",
                "Report car damage",
                "Report a scratch, dent or accident with a company car.",
                car_id="The car.",
                description="What happened.",
            ),
            A("service_due", "Service due", "Cars due for inspection or service.", read_only=True),
        ),
    ),
)


def _record_tools(entity: Entity) -> list[dict]:
    """The five record-style tools of an entity, described as developers do."""
    keys = list(entity.fields)
    s, p = entity.singular.replace("_", " "), entity.plural
    first = ", ".join(k.replace("_", " ") for k in keys[:2])
    return [
        _tool(
            f"search_{entity.plural.lower().replace(' ', '_')}",
            f"Search {p}",
            f"Search {p} by {first} and other fields. Returns matching {p} with their ids.",
            {**{k: v for k, v in list(entity.fields.items())[:2]}, "limit": "Most results."},
            True,
        ),
        _tool(
            f"get_{entity.singular}",
            f"Get {s}",
            f"Get one {s} by its id, with all its fields.",
            {f"{entity.singular}_id": f"The {s}'s id."},
            True,
        ),
        _tool(
            f"create_{entity.singular}",
            f"Create {s}",
            f"Create a new {s}. {entity.about}",
            entity.fields,
            False,
        ),
        _tool(
            f"update_{entity.singular}",
            f"Update {s}",
            f"Change fields of an existing {s}.",
            {f"{entity.singular}_id": f"The {s}'s id.", **entity.fields},
            False,
        ),
        _tool(
            f"delete_{entity.singular}",
            f"Delete {s}",
            f"Delete a {s} permanently.",
            {f"{entity.singular}_id": f"The {s}'s id."},
            False,
        ),
    ]


def _tool(name: str, title: str, description: str, arguments: dict, read_only: bool, keywords=()) -> dict:
    tool = {
        "name": name,
        "title": title,
        "description": description,
        "route": f"POST /{name}",
        "inputSchema": {
            "type": "object",
            "properties": {k: {"type": "string", "description": v} for k, v in arguments.items()},
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": read_only, "destructiveHint": False},
    }
    if keywords:
        tool["keywords"] = list(keywords)
    return tool


def manifest(app: AppSpec, *, suffix: str = "", keywords: bool = True) -> dict:
    """``app`` as a real manifest (one echo handler behind every route); ``suffix`` makes a copy."""
    tools = [t for entity in app.entities for t in _record_tools(entity)]
    tools += [
        _tool(a.name, a.title, a.description, a.arguments, a.read_only, a.keywords if keywords else ())
        for a in app.actions
    ]
    return {
        "name": app.name + suffix,
        "title": app.title,
        "description": app.description,
        "access": app.access,
        "routes": {f"POST /{t['name']}": {"handler": "server/handle.py", "auth": app.access} for t in tools},
        "mcp": {"tools": tools},
    }


# Users of the benchmark tenant and their roles.
USERS = {
    "staff": [],
    "finance": ["finance"],
    "buyer": ["procurement"],
    "people": ["hr", "payroll"],
    "recruiter": ["recruiter"],
    "it": ["it"],
    "lawyer": ["legal"],
    "marketer": ["marketing"],
    "auditor": ["audit", "finance"],
}


@dataclass(frozen=True)
class Intent:
    text: str
    user: str
    gold: str  # "<app>.<tool>"
    kind: str  # paraphrase, synonym, typo, or restricted (the user lacks the gold tool's role)


def I(text, user, gold, kind="paraphrase"):  # noqa: N802, E743 - a table constructor
    return Intent(text, user, gold, kind)


INTENTS: tuple[Intent, ...] = (
    # billing (finance)
    I("bill Contoso for the 20 hours of consulting we did last week", "finance", "billing.create_invoice"),
    I("email the bill for order 1042 to the client", "finance", "billing.send_invoice"),
    I("Acme settled invoice 77 yesterday, record it", "finance", "billing.mark_invoice_paid"),
    I("chase the customer who still hasn't paid us", "finance", "billing.send_payment_reminder", "synonym"),
    I("who owes us money past the deadline?", "finance", "billing.overdue_report"),
    I("we issued that bill by mistake, cancel it", "finance", "billing.void_invoice"),
    I(
        "give the client a partial credit because of the late delivery",
        "finance",
        "billing.create_credit_note",
    ),
    I("find the invioces for customer Globex", "finance", "billing.search_invoices", "typo"),
    I("bill a customer for the work we delivered", "staff", "billing.create_invoice", "restricted"),
    I("which invoices are overdue", "staff", "billing.overdue_report", "restricted"),
    # quotes
    I("put together a price offer for a prospect interested in 50 licences", "staff", "quotes.create_quote"),
    I("the customer said yes to our proposal Q-19", "staff", "quotes.accept_quote"),
    I("they turned down our offer, too expensive", "staff", "quotes.decline_quote"),
    I("make a copy of last month's quote as a starting point", "staff", "quotes.duplicate_quote"),
    I("I need the estimate as a pdf to attach", "staff", "quotes.quote_pdf", "synonym"),
    I("email the quotation to the lead", "staff", "quotes.send_quote", "synonym"),
    # purchasing (procurement)
    I("order 200 reams of paper from our office supplier", "buyer", "purchasing.create_purchase_order"),
    I("sign off on PO 311, it is above my limit", "buyer", "purchasing.approve_purchase_order"),
    I("the pallets from the vendor arrived this morning", "buyer", "purchasing.receive_goods"),
    I(
        "check the vendor's invoice against what we ordered and received",
        "buyer",
        "purchasing.match_supplier_bill",
        "synonym",
    ),
    I(
        "add a new vendor to our list of companies we buy from",
        "buyer",
        "purchasing.create_supplier",
        "synonym",
    ),
    I("aprove the purchse order for laptops", "buyer", "purchasing.approve_purchase_order", "typo"),
    I("buy 30 monitors from Dell", "staff", "purchasing.create_purchase_order", "restricted"),
    # payments (finance)
    I("give the customer their money back for the duplicate charge", "finance", "payments.refund_payment"),
    I("refnud payment 5521", "finance", "payments.refund_payment", "typo"),
    I("the card was only authorised, take the money now", "finance", "payments.capture_payment"),
    I("send the client a link so they can pay by card online", "finance", "payments.payment_link"),
    I(
        "when did the payment provider transfer money to our bank last month",
        "finance",
        "payments.payout_report",
    ),
    I(
        "a cardholder contested a charge, where does it stand",
        "finance",
        "payments.dispute_status",
        "synonym",
    ),
    I("reimburse the customer for the broken item", "staff", "payments.refund_payment", "restricted"),
    # subscriptions
    I("the client wants to stop their monthly plan", "staff", "subscriptions.cancel_subscription"),
    I("cancle my subscription at the end of the month", "staff", "subscriptions.cancel_subscription", "typo"),
    I(
        "put the customer's plan on hold for the summer",
        "staff",
        "subscriptions.pause_subscription",
        "synonym",
    ),
    I("upgrade Initech to the enterprise tier", "staff", "subscriptions.change_plan", "synonym"),
    I("which customers renew next week", "staff", "subscriptions.renewals_due"),
    I("add 5 more seats to Globex's subscription", "staff", "subscriptions.update_subscription"),
    # crm
    I("add Maria Lopez from Initech to our address book", "staff", "crm.create_contact", "synonym"),
    I("I just spoke with John on the phone, note what we discussed", "staff", "crm.log_call"),
    I("this lead is qualified, turn it into an opportunity", "staff", "crm.convert_lead"),
    I("how much is in my sales funnel by stage", "staff", "crm.pipeline_summary", "synonym"),
    I("there are two entries for the same person, combine them", "staff", "crm.merge_contacts"),
    I("move the Globex opportunity to negotiation", "staff", "crm.update_deal", "synonym"),
    I("look up the email adress of our contact at Umbrella", "staff", "crm.search_contacts", "typo"),
    # support
    I("open a case for a customer whose login fails", "staff", "support.create_ticket", "synonym"),
    I("hand this issue over to the billing team", "staff", "support.assign_ticket"),
    I("this complaint needs the senior team urgently", "staff", "support.escalate_ticket"),
    I("answer the customer on ticket 881", "staff", "support.reply_to_ticket", "synonym"),
    I("the customer confirmed it works now, we're done with it", "staff", "support.close_ticket"),
    I("which requests went past the response deadline", "staff", "support.sla_breaches"),
    # hr
    I("we hired Ana, she starts Monday, kick off her first-day checklist", "people", "hr.start_onboarding"),
    I("Tom is leaving on Friday", "people", "hr.start_offboarding"),
    I("Lisa now reports to Marco", "people", "hr.change_manager"),
    I("how many people work in each department", "people", "hr.headcount_report"),
    I("store the annual appraisal for Ben, rated 4", "people", "hr.record_performance_review", "synonym"),
    I("update Sam's job title to senior engineer", "people", "hr.update_employee"),
    I("how many people work in engineering", "staff", "hr.headcount_report", "restricted"),
    I("change who Lisa reports to", "staff", "hr.change_manager", "restricted"),
    # payroll
    I("pay everyone's wages for November", "people", "payroll.run_payroll"),
    I("I need Ana's salary slip for October", "people", "payroll.payslip", "synonym"),
    I("give Ben a one-time 500 reward for the launch", "people", "payroll.add_bonus", "synonym"),
    I("prepare the monthly tax return for salaries", "people", "payroll.tax_filing"),
    I("run the payrol for this month", "people", "payroll.run_payroll", "typo"),
    I("pay the salaries this month", "staff", "payroll.run_payroll", "restricted"),
    I("show me Tom's payslip", "finance", "payroll.payslip", "restricted"),
    # leave
    I("I want to take a week off in August", "staff", "leave.create_leave_request", "synonym"),
    I("ok my report's holiday request", "staff", "leave.approve_leave"),
    I("how many vacation days do I have left", "staff", "leave.leave_balance", "synonym"),
    I("I've got the flu and can't come in today", "staff", "leave.report_sick"),
    I("who on my team is out next week", "staff", "leave.team_calendar"),
    # recruiting
    I(
        "set up a chat with the applicant Priya on Thursday at 3pm",
        "recruiter",
        "recruiting.schedule_interview",
    ),
    I(
        "we want to hire Priya, send her the contract proposal",
        "recruiter",
        "recruiting.send_offer",
        "synonym",
    ),
    I("let the applicant know we won't move forward", "recruiter", "recruiting.reject_candidate"),
    I("post a new vacancy for a data analyst", "recruiter", "recruiting.create_job_opening", "synonym"),
    I("book an interview with a candidate", "staff", "recruiting.schedule_interview", "restricted"),
    # inventory
    I("how many units of SKU 4411 do we have", "staff", "inventory.stock_level"),
    I("the stocktake counted 48 not 50, fix the number", "staff", "inventory.adjust_stock"),
    I("move 20 chairs from the Berlin warehouse to Munich", "staff", "inventory.transfer_stock"),
    I("what should we order again because it's running low", "staff", "inventory.reorder_suggestions"),
    I("change the price of the blue mug", "staff", "inventory.update_product"),
    # shipping
    I("where is my parcel with tracking number 1Z999", "staff", "shipping.track_shipment", "synonym"),
    I("print the label for the parcel going to Lyon", "staff", "shipping.print_label"),
    I("ask DHL to come get the boxes tomorrow", "staff", "shipping.schedule_pickup"),
    I("which courier is cheapest for a 3 kg box to Spain", "staff", "shipping.shipping_rates", "synonym"),
    I("track shipmnet 1Z999", "staff", "shipping.track_shipment", "typo"),
    # orders
    I("the customer changed their mind before we sent it, stop the order", "staff", "orders.cancel_order"),
    I("customer wants to send back the shoes they received", "staff", "orders.return_order"),
    I("has order 5521 left the warehouse yet", "staff", "orders.order_status"),
    I("the customer never got the confirmation email, send it again", "staff", "orders.resend_confirmation"),
    # projects
    I("how is the website redesign going, are we over budget", "staff", "projects.project_status"),
    I("I finished the wireframes to-do, tick it off", "staff", "projects.complete_task"),
    I("add a to-do for Sam to review the copy by Friday", "staff", "projects.create_task"),
    I("add a launch date checkpoint to the app project", "staff", "projects.add_milestone", "synonym"),
    # timesheets
    I("log 3 hours on the Globex project for today", "staff", "timesheets.create_time_entry"),
    I("send in my hours for this week", "staff", "timesheets.submit_timesheet"),
    I("what share of our time was billable in October", "staff", "timesheets.utilisation_report"),
    # expenses
    I("I paid 45 euros for a client lunch, get it paid back", "staff", "expenses.create_expense_claim"),
    I("I drove 120 km to the customer site, claim it", "staff", "expenses.mileage_claim"),
    I("what is the daily travel allowance in Japan", "staff", "expenses.per_diem_rates"),
    I("sign off on my team member's reimbursement request", "staff", "expenses.approve_expense_claim"),
    # assets
    I("give the new laptop to Ana", "it", "assets.assign_device"),
    I("Ben lost his phone, erase it remotely", "it", "assets.wipe_device"),
    I("when does our Adobe licence renew", "it", "assets.search_licences"),
    I("erase my lost laptop", "staff", "assets.wipe_device", "restricted"),
    # helpdesk
    I("I forgot my password", "staff", "helpdesk.reset_password"),
    I("I need permission to open the finance shared drive", "staff", "helpdesk.request_access", "synonym"),
    I("email is down for the whole office", "staff", "helpdesk.report_outage"),
    I("can I get Photoshop installed", "staff", "helpdesk.request_software"),
    # legal
    I(
        "we need a confidentiality agreement with Initech before the demo",
        "lawyer",
        "legal.draft_nda",
        "synonym",
    ),
    I("send the partnership contract to be signed electronically", "lawyer", "legal.request_signature"),
    I("which agreements run out this quarter", "lawyer", "legal.expiring_contracts", "synonym"),
    I("draft an NDA for our new partner", "staff", "legal.draft_nda", "restricted"),
    # marketing
    I("send the December newsletter to our subscribers on Tuesday", "marketer", "marketing.send_newsletter"),
    I(
        "how did the black friday campaign do, clicks and conversions",
        "marketer",
        "marketing.campaign_performance",
    ),
    I("this person asked to never get our emails again", "marketer", "marketing.unsubscribe_contact"),
    I("start a new ad campaign on social with 5k budget", "marketer", "marketing.create_campaign"),
    I("how did the spring campaign perform", "staff", "marketing.campaign_performance", "restricted"),
    # facilities
    I("is there a room for 8 people free at 2pm", "staff", "facilities.find_free_room"),
    I("the coffee machine on floor 3 is broken", "staff", "facilities.report_maintenance"),
    I("a guest from Globex is coming tomorrow, let reception know", "staff", "facilities.visitor_pass"),
    I("reserve me a hot desk on Thursday", "staff", "facilities.desk_booking", "synonym"),
    I("book the big meeting room for the board meeting at 10", "staff", "facilities.create_room_booking"),
    # knowledge
    I("what's our rule on working from abroad", "staff", "knowledge.ask_policy"),
    I("make my draft guide visible to everybody", "staff", "knowledge.publish_article"),
    # audit
    I("who looked at customer record 991 last week", "auditor", "audit.access_log"),
    I("download every change from Q3 as a spreadsheet", "auditor", "audit.export_audit_trail"),
    I("the finding about weak passwords is fixed, here is the evidence", "auditor", "audit.close_finding"),
    I("who viewed customer record 991", "staff", "audit.access_log", "restricted"),
    # fleet
    I("I filled up the pool car, 40 litres", "staff", "fleet.log_fuel"),
    I("someone dented the company car in the car park", "staff", "fleet.report_damage"),
    I("reserve a pool car for the trip to Hamburg", "staff", "fleet.create_car_booking"),
    I("which cars need their inspection soon", "staff", "fleet.service_due"),
)
