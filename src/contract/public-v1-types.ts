/**
 * Generated from openapi/public-v1.yaml by openapi-typescript: run `npm run generate:types`.
 * Do not edit; the suite fails when this file no longer matches the spec.
 */

export interface paths {
    "/api/public/v1/courses": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the published course runs with their scheduled sessions
         * @description Required scope: `courses:read`.
         *
         *     The published course runs of the key's workspace that have at least one scheduled
         *     session, ordered by the run's earliest listed session start (ascending), ties by course
         *     id. Each run lists every one of its `scheduled` sessions, past and future, ordered by
         *     `startsAt`, ties by session id. Drafts, unpublished runs and cancelled sessions never
         *     appear. No pagination: the whole list is returned. No personal data.
         */
        get: operations["listCourses"];
        /**
         * Not allowed
         * @description Only GET and HEAD are supported.
         */
        put: operations["putCoursesNotAllowed"];
        /**
         * Not allowed
         * @description Only GET and HEAD are supported. The v1 contract has no endpoints that write.
         */
        post: operations["postCoursesNotAllowed"];
        /**
         * Not allowed
         * @description Only GET and HEAD are supported.
         */
        delete: operations["deleteCoursesNotAllowed"];
        /**
         * Not allowed (no CORS)
         * @description Only GET and HEAD are supported; the API is server-to-server and sends no CORS headers.
         */
        options: operations["optionsCoursesNotAllowed"];
        /**
         * Headers of the course list
         * @description `GET` without a body: same status, headers, authentication and rate limit.
         */
        head: operations["headCourses"];
        /**
         * Not allowed
         * @description Only GET and HEAD are supported.
         */
        patch: operations["patchCoursesNotAllowed"];
        trace?: never;
    };
    "/api/public/v1/bookings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the newest 100 bookings
         * @description Required scope: `bookings:read`. The field `participant` additionally requires
         *     `participants:read`.
         *
         *     The bookings of the key's workspace, newest first (`createdAt` descending, ties by id
         *     descending), at most 100. No cursor, no filters.
         */
        get: operations["listBookings"];
        /**
         * Not allowed
         * @description Only GET and HEAD are supported.
         */
        put: operations["putBookingsNotAllowed"];
        /**
         * Not allowed
         * @description Only GET and HEAD are supported. The v1 contract has no endpoints that write.
         */
        post: operations["postBookingsNotAllowed"];
        /**
         * Not allowed
         * @description Only GET and HEAD are supported.
         */
        delete: operations["deleteBookingsNotAllowed"];
        /**
         * Not allowed (no CORS)
         * @description Only GET and HEAD are supported; the API is server-to-server and sends no CORS headers.
         */
        options: operations["optionsBookingsNotAllowed"];
        /**
         * Headers of the booking list
         * @description `GET` without a body: same status, headers, authentication and rate limit.
         */
        head: operations["headBookings"];
        /**
         * Not allowed
         * @description Only GET and HEAD are supported.
         */
        patch: operations["patchBookingsNotAllowed"];
        trace?: never;
    };
    "/api/calendar/v1/{token}.ics": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A feed token, `svc_cal_` + 32 base62 characters (the `<FEED_TOKEN>` placeholder); the last 10
                 *     are the service's issuer tag (tokens created by 1.0.0-beta.1 have none and keep working).
                 * @example svc_cal_4f9Qx2LmT7bV1cZ8kR3nP6sW0yH5jD2a
                 */
                token: string;
            };
            cookie?: never;
        };
        /**
         * The workspace's sessions as an iCalendar feed
         * @description An RFC 5545 `VCALENDAR` with one `VEVENT` per session that `/api/public/v1/courses` lists
         *     for the token's workspace: `UID` stable per session, `DTSTAMP`, `DTSTART` in UTC,
         *     `DURATION`, `SUMMARY` (course title), `LOCATION`, `DESCRIPTION` (course description),
         *     `SEQUENCE` and `LAST-MODIFIED` that change when a session or its course changes;
         *     `X-WR-CALNAME` (workspace name) and `REFRESH-INTERVAL;VALUE=DURATION:PT1H`. CRLF line
         *     ends; lines folded at 75 octets, never inside a UTF-8 character. No personal data.
         *
         *     The token is the only credential (no bearer key). Unknown, malformed and revoked tokens
         *     get the same `404`, saying nothing about why. 120 requests per 60 seconds per token.
         */
        get: operations["getCalendarFeed"];
        put?: never;
        /**
         * Not allowed
         * @description Only GET and HEAD are supported.
         */
        post: operations["postCalendarNotAllowed"];
        delete?: never;
        options?: never;
        /**
         * Headers of the calendar feed
         * @description `GET` without a body.
         */
        head: operations["headCalendarFeed"];
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness
         * @description The process is alive. No authentication, no data.
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness
         * @description The database is reachable, its migrations are current and the instance is not shutting down. No authentication, no data. With read replicas, `replicas` gives each one's state; one down or lagging does not make the instance unready.
         */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi/public-v1.yaml": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This document
         * @description The machine-readable contract, served unchanged and without authentication.
         */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This document as a readable reference page
         * @description An HTML page that renders `/openapi/public-v1.yaml` (Redoc). Every asset comes from the
         *     service itself; a strict `Content-Security-Policy` lets the page load nothing from any
         *     other origin. No authentication.
         */
        get: operations["getApiReference"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs/assets/redoc.standalone.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The reference page's renderer
         * @description The script `/docs` loads (Redoc's standalone build), served by the service. No authentication.
         */
        get: operations["getApiReferenceScript"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "booking.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A booking was created
         * @description Sent over HTTPS to every endpoint of the workspace that subscribes to `booking.created`
         *     (every endpoint does unless it was registered with other event types) and was registered
         *     (and not removed) when the booking was created; every booking insert, by whatever writer,
         *     produces exactly one event, recorded in the same transaction. A removed endpoint gets no
         *     further attempts.
         *
         *     **Signature** (Standard Webhooks v1): HMAC-SHA256 with the endpoint secret (`whsec_` +
         *     base64 of 32 random bytes; the key is the base64-decoded part) over
         *     `<webhook-id>.<webhook-timestamp>.<raw body>`, sent as `v1,<base64>` in `x-svc-signature`
         *     and, identically, in `webhook-signature`, so every Standard Webhooks library verifies it.
         *     Either header may hold several signatures separated by single spaces
         *     (`v1,<base64> v1,<base64>`): while an endpoint's secret is being rotated, every attempt is
         *     signed with the new and the previous secret until the overlap chosen by the operator ends
         *     (24 hours by default), then with the new one alone. A receiver accepts the delivery when
         *     any one entry matches a secret it holds; Standard Webhooks libraries do this already.
         *
         *     **Delivery**: at-least-once; deduplicate by `webhook-id` (the event `id`); no ordering
         *     guarantee. An attempt fails on a network or TLS error, a 15 s timeout (for the whole
         *     exchange), or any status outside 200–299 (redirects are not followed). At most 8
         *     attempts: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after the previous
         *     failure; after the 8th failure the delivery is marked failed and later events are still
         *     sent. Every attempt of an event to an endpoint sends the same body (`data.booking` as it
         *     was at the first attempt); only `webhook-timestamp` and the signature change. An operator
         *     may add manual attempts outside the 8, or send the failed events of an endpoint since a
         *     given time again, each as a new series of up to 8 attempts with its original `webhook-id`.
         *     An endpoint whose every attempt has failed for 5 days (the default) is disabled until an operator
         *     enables it again. An answer `410 Gone` disables the endpoint at once: no further attempt
         *     of any event is made until an operator enables it again. Targets must be `https://`; private, loopback,
         *     link-local and other non-public addresses are refused when connecting, after DNS
         *     resolution. The request has `Content-Type: application/json` and
         *     `User-Agent: course-booking-webhooks/1`.
         *
         *     An operator may send a **test event** (`"test": true`, an example booking whose id starts
         *     with `bkg_test_`) to check a receiver; it is sent once and never retried.
         */
        post: operations["bookingCreated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "booking.updated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A booking changed
         * @description Sent to the endpoints of the workspace that subscribe to `booking.updated` (an endpoint
         *     does only when it was registered or changed to; others never see it) when a committed
         *     transaction changes what the booking looks like in `/bookings`: its `status`, `updatedAt`,
         *     `courseRunId` (or `source`, `createdAt`), or its participant (added, changed or removed).
         *     One event per transaction and booking, with `data.booking` as the booking was when the
         *     transaction committed and `data.previous` holding the values the changed fields had before
         *     it; several changes in one transaction make one event, a change that leaves the booking
         *     as it was makes none, and a booking created and changed in one transaction gets
         *     `booking.created` alone. Every writer counts, as for `booking.created`.
         *
         *     Participant data follows the endpoint's registration: an endpoint registered without it
         *     sees no `participant` in `booking` or `previous`, and gets no event for a change of the
         *     participant alone.
         *
         *     Signature, headers, delivery, attempts, `410 Gone` and test events: as `booking.created`.
         */
        post: operations["bookingUpdated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        CourseList: {
            /** @description Every listed course run; no pagination. */
            data: components["schemas"]["Course"][];
        };
        /** @description One published course run. */
        Course: {
            id: components["schemas"]["Id"];
            /**
             * @description Title of the course template.
             * @example First Aid Basics
             */
            title: string;
            /**
             * @description Description of the course template.
             * @example Two mornings.
             */
            description: string;
            /** @description The run's scheduled sessions by `startsAt`, ties by id. */
            sessions: components["schemas"]["Session"][];
        };
        Session: {
            id: components["schemas"]["Id"];
            startsAt: components["schemas"]["Timestamp"];
            /**
             * @description Duration in minutes.
             * @example 90
             */
            durationMinutes: number;
            /**
             * @description IANA time zone name of the venue (shape Area/City).
             * @example Europe/Berlin
             */
            timeZone: string;
            /**
             * @description The venue.
             * @example Room 1
             */
            location: string;
        };
        BookingList: {
            /** @description The newest bookings, at most 100. */
            data: components["schemas"]["Booking"][];
        };
        Booking: {
            id: components["schemas"]["Id"];
            courseRunId: components["schemas"]["Id"];
            /**
             * @example widget
             * @enum {string}
             */
            source: "admin" | "public_page" | "widget" | "api";
            /**
             * @example confirmed
             * @enum {string}
             */
            status: "pending" | "confirmed" | "waitlisted" | "cancelled" | "expired";
            createdAt: components["schemas"]["Timestamp"];
            updatedAt: components["schemas"]["Timestamp"];
            participant?: components["schemas"]["Participant"];
        };
        /**
         * @description Personal data. Present only when the key holds `participants:read` (or, in a webhook,
         *     the endpoint was registered with participant data) and the booking has participant
         *     data; otherwise the field is absent. It is never `null`.
         */
        Participant: {
            /** @example Ada Lovelace */
            name: string;
            /**
             * Format: email
             * @example ada@example.com
             */
            email: string;
        };
        BookingCreatedEvent: {
            /**
             * @description The event id, equal to the `webhook-id` header.
             * @example evt_2f1c9a7e5b3d4c8e9f0a1b2c3d4e5f60
             */
            id: string;
            /** @constant */
            type: "booking.created";
            /** @description When the event was recorded (the transaction that inserted the booking). */
            createdAt: components["schemas"]["Timestamp"];
            test?: components["schemas"]["TestEventFlag"];
            data: {
                booking: components["schemas"]["Booking"];
            };
        };
        BookingUpdatedEvent: {
            /**
             * @description The event id, equal to the `webhook-id` header.
             * @example evt_7d0b1f3c5a2e4d6f8091a2b3c4d5e6f7
             */
            id: string;
            /** @constant */
            type: "booking.updated";
            /** @description When the event was recorded (the start of the transaction that changed the booking). */
            createdAt: components["schemas"]["Timestamp"];
            test?: components["schemas"]["TestEventFlag"];
            data: {
                /** @description The booking as it was when the transaction committed. */
                booking: components["schemas"]["Booking"];
                previous: components["schemas"]["BookingPrevious"];
            };
        };
        /**
         * @description The fields the transaction changed, each with its value before the transaction; fields it
         *     did not change are absent. `participant` is `null` when the booking had no participant
         *     data before, and appears only for endpoints registered with participant data.
         */
        BookingPrevious: {
            courseRunId?: components["schemas"]["Id"];
            /** @enum {string} */
            source?: "admin" | "public_page" | "widget" | "api";
            /**
             * @example pending
             * @enum {string}
             */
            status?: "pending" | "confirmed" | "waitlisted" | "cancelled" | "expired";
            createdAt?: components["schemas"]["Timestamp"];
            updatedAt?: components["schemas"]["Timestamp"];
            participant?: components["schemas"]["Participant"] | null;
        };
        /**
         * @description Present, and `true`, only on a test event an operator sent (`webhook test`): its booking
         *     is an example whose id starts with `bkg_test_` and exists nowhere. Absent on every real event.
         * @constant
         */
        TestEventFlag: true;
        Health: {
            /** @enum {string} */
            status: "ok" | "ready" | "unavailable";
            /** @enum {string} */
            reason?: "database unreachable" | "migrations pending" | "shutting down";
            /** @description Only where read replicas are configured: each one's state. A replica that is down or lagging is skipped and the primary answers its reads, so the instance stays ready. */
            replicas?: {
                /** @description The replica's place in the configuration, from 1. */
                replica: number;
                /** @enum {string} */
                state: "ok" | "lagging" | "down";
            }[];
        };
        /**
         * @description An opaque identifier; never a sequence number. Do not parse it.
         * @example run_8f14e45fceea467a9b5e0c6d2b1a7f3c
         */
        Id: string;
        /**
         * Format: date-time
         * @description ISO 8601 in UTC with milliseconds and `Z`, as `Date.prototype.toISOString()` writes it.
         * @example 2026-01-10T12:00:00.000Z
         */
        Timestamp: string;
        /**
         * @description The one error shape. Codes and their statuses:
         *
         *     | HTTP | code |
         *     |---|---|
         *     | 400 | invalid_request |
         *     | 401 | invalid_api_key |
         *     | 403 | missing_scope |
         *     | 403 | ip_not_allowed |
         *     | 404 | not_found |
         *     | 405 | method_not_allowed |
         *     | 408 | request_timeout |
         *     | 429 | rate_limit_exceeded |
         *     | 500 | internal_error |
         *     | 503 | service_unavailable |
         */
        Error: {
            error: {
                /** @enum {string} */
                code: "invalid_request" | "invalid_api_key" | "missing_scope" | "not_found" | "method_not_allowed" | "request_timeout" | "rate_limit_exceeded" | "internal_error" | "service_unavailable";
                /** @description A human-readable explanation, safe to show. */
                message: string;
            };
        };
        /**
         * @description The error shape of a `403`: `missing_scope`, or `ip_not_allowed` for a key with an IP allow
         *     list used from outside it (only keys that have a list ever get it).
         */
        ForbiddenError: {
            error: {
                /** @enum {string} */
                code: "missing_scope" | "ip_not_allowed";
                /** @description A human-readable explanation, safe to show. */
                message: string;
            };
        };
    };
    responses: {
        /** @description The course list. `Content-Type` is `application/json; charset=utf-8`. */
        CourseList: {
            headers: {
                "Cache-Control": components["headers"]["CacheControl"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                "X-Content-Type-Options": components["headers"]["XContentTypeOptions"];
                "Referrer-Policy": components["headers"]["ReferrerPolicy"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "data": [
                 *         {
                 *           "id": "run_8f14e45fceea467a9b5e0c6d2b1a7f3c",
                 *           "title": "First Aid Basics",
                 *           "description": "Two mornings.",
                 *           "sessions": [
                 *             {
                 *               "id": "ses_c9f0f895fb98467b8b7c0a7e1d2f3a4b",
                 *               "startsAt": "2026-03-01T09:00:00.000Z",
                 *               "durationMinutes": 90,
                 *               "timeZone": "Europe/Berlin",
                 *               "location": "Room 1"
                 *             }
                 *           ]
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["CourseList"];
            };
        };
        /** @description The headers of the course list, without a body. */
        CourseListHead: {
            headers: {
                "Cache-Control": components["headers"]["CacheControl"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description The booking list. `Content-Type` is `application/json; charset=utf-8`. */
        BookingList: {
            headers: {
                "Cache-Control": components["headers"]["CacheControl"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                "X-Content-Type-Options": components["headers"]["XContentTypeOptions"];
                "Referrer-Policy": components["headers"]["ReferrerPolicy"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "data": [
                 *         {
                 *           "id": "bkg_45c48cce2e2d4fbd8a1b2c3d4e5f6a7b",
                 *           "courseRunId": "run_8f14e45fceea467a9b5e0c6d2b1a7f3c",
                 *           "source": "widget",
                 *           "status": "confirmed",
                 *           "createdAt": "2026-01-10T12:00:00.000Z",
                 *           "updatedAt": "2026-01-11T08:30:00.000Z",
                 *           "participant": {
                 *             "name": "Ada Lovelace",
                 *             "email": "ada@example.com"
                 *           }
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["BookingList"];
            };
        };
        /** @description The headers of the booking list, without a body. */
        BookingListHead: {
            headers: {
                "Cache-Control": components["headers"]["CacheControl"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description A query string was sent; the message names the parameter. */
        InvalidRequest: {
            headers: {
                "RateLimit-Policy": components["headers"]["RateLimitPolicy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "invalid_request",
                 *         "message": "Query parameter \"limit\" is not accepted; this endpoint takes no query parameters."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The key is missing, invalid, too long, revoked, rotated or expired (an expired key gets exactly what a revoked one gets). When the header is not in the form `Bearer <API key>` (a bare key, another scheme, two values) or is repeated, the message says the form expected; it never names or quotes a key. */
        InvalidApiKey: {
            headers: {
                "WWW-Authenticate": components["headers"]["WWWAuthenticateInvalid"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "invalid_api_key",
                 *         "message": "The API key is missing, invalid, revoked or rotated."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description `missing_scope`: the key is valid but lacks the scope the endpoint requires; the answer
         *     carries `WWW-Authenticate` naming the scope and the `RateLimit` headers (the request
         *     counted). `ip_not_allowed`: the key has an IP allow list and the client address is outside
         *     it (only keys created or updated with one get it); the answer carries neither header, the
         *     request did not count against the key's limit, and the message names neither the list nor
         *     the key.
         */
        Forbidden: {
            headers: {
                "WWW-Authenticate": components["headers"]["WWWAuthenticateScopeIfMissing"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicyIfCounted"];
                RateLimit: components["headers"]["RateLimitIfCounted"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ForbiddenError"];
            };
        };
        /** @description Nothing exists at this path (also for unknown, malformed or revoked feed tokens). */
        NotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "not_found",
                 *         "message": "No resource exists at this path."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Only GET and HEAD are accepted; no authentication is needed to learn that. */
        MethodNotAllowed: {
            headers: {
                Allow: components["headers"]["Allow"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "method_not_allowed",
                 *         "message": "This endpoint accepts only GET and HEAD."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description The request's headers did not arrive within the header timeout (10 seconds by default) of
         *     its start, or the whole request not within the request timeout (30 seconds by default).
         *     The connection is closed after this answer.
         */
        RequestTimeout: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "request_timeout",
                 *         "message": "The request was not received in time."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description More than 120 requests in 60 seconds with this key; or, without a valid key, more than 30
         *     failed authentications (API keys and feed tokens together) in 60 seconds from this client
         *     address. Only failures count against an address: a valid key (or feed token) is served
         *     from any address, however many failures it sent.
         */
        RateLimitExceeded: {
            headers: {
                "Retry-After": components["headers"]["RetryAfterRateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimitPolicyIfKey"];
                RateLimit: components["headers"]["RateLimitIfKey"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "rate_limit_exceeded",
                 *         "message": "Too many requests; wait for the time given in Retry-After."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description More than 120 requests in 60 seconds with this feed token; or more than 30 failed
         *     authentications (unknown or malformed feed tokens and API keys together) in 60 seconds
         *     from this client address.
         */
        FeedRateLimitExceeded: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "rate_limit_exceeded",
                 *         "message": "Too many requests; wait for the time given in Retry-After."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description An unexpected failure; the message is generic (no stack, no SQL, no internal id). */
        InternalError: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "internal_error",
                 *         "message": "An unexpected error occurred."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The database is unavailable; retry after the given time. */
        ServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "service_unavailable",
                 *         "message": "The service is temporarily unavailable; retry later."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The feed, `text/calendar; charset=utf-8`. */
        Calendar: {
            headers: {
                ETag: components["headers"]["ETag"];
                "Cache-Control": components["headers"]["CalendarCacheControl"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example BEGIN:VCALENDAR
                 *     VERSION:2.0
                 *     PRODID:-//Course booking//Public calendar feed v1//EN
                 *     CALSCALE:GREGORIAN
                 *     METHOD:PUBLISH
                 *     X-WR-CALNAME;VALUE=TEXT:Acme Academy
                 *     REFRESH-INTERVAL;VALUE=DURATION:PT1H
                 *     X-PUBLISHED-TTL:PT1H
                 *     BEGIN:VEVENT
                 *     UID:ses_c9f0f895fb98467b8b7c0a7e1d2f3a4b
                 *     DTSTAMP:20260110T120000Z
                 *     DTSTART:20260301T090000Z
                 *     DURATION:PT1H30M
                 *     SUMMARY:First Aid Basics
                 *     LOCATION:Room 1
                 *     DESCRIPTION:Two mornings.
                 *     SEQUENCE:0
                 *     LAST-MODIFIED:20260110T120000Z
                 *     END:VEVENT
                 *     END:VCALENDAR
                 */
                "text/calendar": string;
            };
        };
        /** @description The feed has not changed since the ETag sent in If-None-Match. */
        CalendarNotModified: {
            headers: {
                ETag: components["headers"]["ETag"];
                [name: string]: unknown;
            };
            content?: never;
        };
    };
    parameters: {
        /**
         * @description `v1,<base64 HMAC-SHA256>`; during a secret rotation's overlap, two such entries separated by a space (`v1,<new> v1,<previous>`): accept the delivery when any entry verifies.
         * @example v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=
         */
        WebhookSvcSignature: string;
        /**
         * @description The event id; the same on every attempt. Deduplicate by it.
         * @example evt_2f1c9a7e5b3d4c8e9f0a1b2c3d4e5f60
         */
        WebhookId: string;
        /**
         * @description Unix time in seconds of this attempt.
         * @example 1795344000
         */
        WebhookTimestamp: string;
        /** @description The same value as `x-svc-signature` (one signature, or two space-separated during a secret rotation's overlap). */
        WebhookSignature: string;
        /**
         * @description An ETag of a previous answer; when it is still current the answer is 304.
         * @example "q0vT3lP2m0b9Xn8Zr1kW7yB5sD4fG6hJ"
         */
        IfNoneMatch: string;
    };
    requestBodies: never;
    headers: {
        /**
         * @description Always `private, no-store` on the REST endpoints.
         * @example private, no-store
         */
        CacheControl: "private, no-store";
        /**
         * @description The quota and window of the key's rate limit (IETF httpapi RateLimit draft).
         * @example "default";q=120;w=60
         */
        RateLimitPolicy: string;
        /**
         * @description Requests left in the window and seconds until it resets (IETF httpapi RateLimit draft).
         * @example "default";r=119;t=60
         */
        RateLimit: string;
        /**
         * @description Seconds to wait before sending again.
         * @example 60
         */
        RetryAfter: number;
        /**
         * @description Seconds to wait before sending again; exactly the window, 60, for the per-key limit; the time left in the window for the per-address authentication limit.
         * @example 60
         */
        RetryAfterRateLimit: number;
        /**
         * @description Present when the request had a valid key (the per-key limit); absent on the per-address authentication limit.
         * @example "default";q=120;w=60
         */
        RateLimitPolicyIfKey: string;
        /**
         * @description Present when the request had a valid key (the per-key limit); absent on the per-address authentication limit.
         * @example "default";r=0;t=42
         */
        RateLimitIfKey: string;
        /**
         * @description `Bearer` when the header is missing, `Bearer error="invalid_token"` otherwise (RFC 6750).
         * @example Bearer error="invalid_token"
         */
        WWWAuthenticateInvalid: "Bearer" | "Bearer error=\"invalid_token\"";
        /**
         * @description With `missing_scope` (always), it names the scope the endpoint needs (RFC 6750); absent with `ip_not_allowed`.
         * @example Bearer error="insufficient_scope", scope="courses:read"
         */
        WWWAuthenticateScopeIfMissing: string;
        /**
         * @description With `missing_scope` (always); absent with `ip_not_allowed`, which the key's limit does not count.
         * @example "default";q=120;w=60
         */
        RateLimitPolicyIfCounted: string;
        /**
         * @description With `missing_scope` (always); absent with `ip_not_allowed`, which the key's limit does not count.
         * @example "default";r=118;t=60
         */
        RateLimitIfCounted: string;
        /**
         * @description The methods the path accepts.
         * @example GET, HEAD
         */
        Allow: "GET, HEAD";
        /**
         * @description The page may load scripts, styles, images, fonts and data only from this service.
         * @example default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'
         */
        ContentSecurityPolicy: string;
        /**
         * @description Always `nosniff`.
         * @example nosniff
         */
        XContentTypeOptions: "nosniff";
        /**
         * @description Always `no-referrer`.
         * @example no-referrer
         */
        ReferrerPolicy: "no-referrer";
        /**
         * @description A strong validator of the feed's content; send it back in If-None-Match.
         * @example "q0vT3lP2m0b9Xn8Zr1kW7yB5sD4fG6hJ"
         */
        ETag: string;
        /**
         * @description Clients may keep the feed but must revalidate it.
         * @example private, no-cache
         */
        CalendarCacheControl: "private, no-cache";
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listCourses: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["CourseList"];
            400: components["responses"]["InvalidRequest"];
            401: components["responses"]["InvalidApiKey"];
            403: components["responses"]["Forbidden"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["RateLimitExceeded"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putCoursesNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    postCoursesNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    deleteCoursesNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    optionsCoursesNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    headCourses: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["CourseListHead"];
            400: components["responses"]["InvalidRequest"];
            401: components["responses"]["InvalidApiKey"];
            403: components["responses"]["Forbidden"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["RateLimitExceeded"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchCoursesNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    listBookings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["BookingList"];
            400: components["responses"]["InvalidRequest"];
            401: components["responses"]["InvalidApiKey"];
            403: components["responses"]["Forbidden"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["RateLimitExceeded"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putBookingsNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    postBookingsNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    deleteBookingsNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    optionsBookingsNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    headBookings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["BookingListHead"];
            400: components["responses"]["InvalidRequest"];
            401: components["responses"]["InvalidApiKey"];
            403: components["responses"]["Forbidden"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["RateLimitExceeded"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchBookingsNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    getCalendarFeed: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description An ETag of a previous answer; when it is still current the answer is 304.
                 * @example "q0vT3lP2m0b9Xn8Zr1kW7yB5sD4fG6hJ"
                 */
                "If-None-Match"?: components["parameters"]["IfNoneMatch"];
            };
            path: {
                /**
                 * @description A feed token, `svc_cal_` + 32 base62 characters (the `<FEED_TOKEN>` placeholder); the last 10
                 *     are the service's issuer tag (tokens created by 1.0.0-beta.1 have none and keep working).
                 * @example svc_cal_4f9Qx2LmT7bV1cZ8kR3nP6sW0yH5jD2a
                 */
                token: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["Calendar"];
            304: components["responses"]["CalendarNotModified"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["FeedRateLimitExceeded"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    postCalendarNotAllowed: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description A feed token, `svc_cal_` + 32 base62 characters (the `<FEED_TOKEN>` placeholder); the last 10
                 *     are the service's issuer tag (tokens created by 1.0.0-beta.1 have none and keep working).
                 * @example svc_cal_4f9Qx2LmT7bV1cZ8kR3nP6sW0yH5jD2a
                 */
                token: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    headCalendarFeed: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description An ETag of a previous answer; when it is still current the answer is 304.
                 * @example "q0vT3lP2m0b9Xn8Zr1kW7yB5sD4fG6hJ"
                 */
                "If-None-Match"?: components["parameters"]["IfNoneMatch"];
            };
            path: {
                /**
                 * @description A feed token, `svc_cal_` + 32 base62 characters (the `<FEED_TOKEN>` placeholder); the last 10
                 *     are the service's issuer tag (tokens created by 1.0.0-beta.1 have none and keep working).
                 * @example svc_cal_4f9Qx2LmT7bV1cZ8kR3nP6sW0yH5jD2a
                 */
                token: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["Calendar"];
            304: components["responses"]["CalendarNotModified"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            429: components["responses"]["FeedRateLimitExceeded"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Alive. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ok"
                     *     }
                     */
                    "application/json": components["schemas"]["Health"];
                };
            };
        };
    };
    getReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready to serve. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ready"
                     *     }
                     */
                    "application/json": components["schemas"]["Health"];
                };
            };
            /** @description Not ready; the reason says why. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "unavailable",
                     *       "reason": "database unreachable"
                     *     }
                     */
                    "application/json": components["schemas"]["Health"];
                };
            };
        };
    };
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI document. */
            200: {
                headers: {
                    "X-Content-Type-Options": components["headers"]["XContentTypeOptions"];
                    [name: string]: unknown;
                };
                content: {
                    /** @example openapi: 3.1.0 */
                    "application/yaml": string;
                };
            };
        };
    };
    getApiReference: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The reference page. */
            200: {
                headers: {
                    "Content-Security-Policy": components["headers"]["ContentSecurityPolicy"];
                    "X-Content-Type-Options": components["headers"]["XContentTypeOptions"];
                    [name: string]: unknown;
                };
                content: {
                    /** @example <!doctype html> */
                    "text/html": string;
                };
            };
        };
    };
    getApiReferenceScript: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The script. */
            200: {
                headers: {
                    "X-Content-Type-Options": components["headers"]["XContentTypeOptions"];
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": string;
                };
            };
        };
    };
    bookingCreated: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description `v1,<base64 HMAC-SHA256>`; during a secret rotation's overlap, two such entries separated by a space (`v1,<new> v1,<previous>`): accept the delivery when any entry verifies.
                 * @example v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=
                 */
                "x-svc-signature": components["parameters"]["WebhookSvcSignature"];
                /**
                 * @description The event id; the same on every attempt. Deduplicate by it.
                 * @example evt_2f1c9a7e5b3d4c8e9f0a1b2c3d4e5f60
                 */
                "webhook-id": components["parameters"]["WebhookId"];
                /**
                 * @description Unix time in seconds of this attempt.
                 * @example 1795344000
                 */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description The same value as `x-svc-signature` (one signature, or two space-separated during a secret rotation's overlap). */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BookingCreatedEvent"];
            };
        };
        responses: {
            /** @description Any 2xx status acknowledges the event; `410` disables the endpoint; anything else counts as a failed attempt. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    bookingUpdated: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description `v1,<base64 HMAC-SHA256>`; during a secret rotation's overlap, two such entries separated by a space (`v1,<new> v1,<previous>`): accept the delivery when any entry verifies.
                 * @example v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=
                 */
                "x-svc-signature": components["parameters"]["WebhookSvcSignature"];
                /**
                 * @description The event id; the same on every attempt. Deduplicate by it.
                 * @example evt_2f1c9a7e5b3d4c8e9f0a1b2c3d4e5f60
                 */
                "webhook-id": components["parameters"]["WebhookId"];
                /**
                 * @description Unix time in seconds of this attempt.
                 * @example 1795344000
                 */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description The same value as `x-svc-signature` (one signature, or two space-separated during a secret rotation's overlap). */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BookingUpdatedEvent"];
            };
        };
        responses: {
            /** @description Any 2xx status acknowledges the event; `410` disables the endpoint; anything else counts as a failed attempt. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
