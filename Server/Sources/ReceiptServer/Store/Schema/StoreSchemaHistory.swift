/// The statements of the released schema versions that the figures' generators once wrote
/// (SubscriptionSummaries, FlowDays, ExpiryDays, StoreFigures.flowIndexes), frozen as released: a
/// store of an older version runs them as they were, while the generators go on to write the next
/// versions' statements. Never edit one (SchemaHistoryTests pins them); add a version instead.
enum StoreSchemaHistory {
    /// Version 6: a summary per subscription, made from the rows held (SubscriptionSummaries as it was).
    static let subscriptionSummaries: [String] = [
        #"CREATE TABLE subscription_summaries (original_transaction_id TEXT PRIMARY KEY, product_id TEXT NOT NULL, standing_purchase_date BIGINT, standing_expires_date BIGINT, standing_price BIGINT, standing_currency TEXT, last_revoked BIGINT NOT NULL, grace_period_expires_date BIGINT, is_in_billing_retry_period BIGINT, expiration_intent BIGINT)"#,
        #"CREATE INDEX subscription_summaries_by_end ON subscription_summaries (standing_expires_date)"#,
        #"""
        WITH last AS (
          SELECT original_transaction_id, transaction_id, product_id, revocation_date, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(transaction_id) OVER standing_order END AS standing_transaction_id, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(product_id) OVER standing_order END AS standing_product_id, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(purchase_date) OVER standing_order END AS standing_purchase_date, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(expires_date) OVER standing_order END AS standing_expires_date, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(price) OVER standing_order END AS standing_price, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(currency) OVER standing_order END AS standing_currency,
            ROW_NUMBER() OVER (PARTITION BY original_transaction_id
              ORDER BY purchase_date IS NULL, purchase_date DESC, transaction_id DESC) AS position
          FROM transactions WHERE product_type = 'Auto-Renewable Subscription'
          WINDOW standing_order AS (PARTITION BY original_transaction_id ORDER BY revocation_date IS NOT NULL,
            expires_date IS NULL, expires_date DESC, purchase_date IS NOT NULL, purchase_date, transaction_id)
        ) INSERT INTO subscription_summaries (original_transaction_id, product_id, standing_purchase_date, standing_expires_date, standing_price, standing_currency, last_revoked, grace_period_expires_date, is_in_billing_retry_period, expiration_intent) SELECT last.original_transaction_id AS original_transaction_id, coalesce(last.standing_product_id, last.product_id, '') AS product_id, last.standing_purchase_date AS standing_purchase_date, last.standing_expires_date AS standing_expires_date, last.standing_price AS standing_price, last.standing_currency AS standing_currency, CASE WHEN last.revocation_date IS NOT NULL THEN 1 ELSE 0 END AS last_revoked, renewal.grace_period_expires_date AS grace_period_expires_date, renewal.is_in_billing_retry_period AS is_in_billing_retry_period, renewal.expiration_intent AS expiration_intent
        FROM last LEFT JOIN renewal_infos AS renewal ON renewal.original_transaction_id = last.original_transaction_id
        WHERE last.position = 1
        """#,
        #"ALTER TABLE transactions ADD COLUMN period_position BIGINT"#,
        #"ALTER TABLE transactions ADD COLUMN previous_expires_date BIGINT"#,
        #"ALTER TABLE transactions ADD COLUMN previous_offer_discount_type TEXT"#,
        #"CREATE INDEX transactions_by_purchase ON transactions (purchase_date, product_type, period_position, previous_expires_date, offer_discount_type, previous_offer_discount_type, transaction_reason, product_id)"#,
        #"CREATE INDEX transactions_by_revocation ON transactions (revocation_date)"#,
        #"""
        WITH periods AS (
          SELECT transaction_id, ROW_NUMBER() OVER (PARTITION BY original_transaction_id ORDER BY purchase_date, transaction_id) AS period_position, LAG(expires_date) OVER (PARTITION BY original_transaction_id ORDER BY purchase_date, transaction_id) AS previous_expires_date, LAG(offer_discount_type) OVER (PARTITION BY original_transaction_id ORDER BY purchase_date, transaction_id) AS previous_offer_discount_type
          FROM transactions WHERE product_type = 'Auto-Renewable Subscription' AND purchase_date IS NOT NULL
        )
        UPDATE transactions SET period_position = periods.period_position, previous_expires_date = periods.previous_expires_date, previous_offer_discount_type = periods.previous_offer_discount_type FROM periods WHERE transactions.transaction_id = periods.transaction_id
        """#,
    ]

    /// Version 7: the periods begun per day and product, by kind, made from the rows held (FlowDays as it was), and the
    /// indexes of the flows' refunds and churn covering what they read (StoreFigures.flowIndexes as they were).
    static let flowDays: [String] = [
        #"CREATE TABLE subscription_flow_days (day BIGINT NOT NULL, product_id TEXT NOT NULL, new_subscriptions BIGINT NOT NULL, trial_starts BIGINT NOT NULL, renewals BIGINT NOT NULL, trial_conversions BIGINT NOT NULL, recoveries BIGINT NOT NULL, reactivations BIGINT NOT NULL, PRIMARY KEY (day, product_id))"#,
        #"INSERT INTO subscription_flow_days (day, product_id, new_subscriptions, trial_starts, renewals, trial_conversions, recoveries, reactivations) SELECT purchase_date / 86400000, coalesce(product_id, ''), CAST(sum(CASE WHEN period_position = 1 THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position = 1 AND offer_discount_type = 'FREE_TRIAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND purchase_date <= coalesce(previous_expires_date, purchase_date) THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND previous_offer_discount_type = 'FREE_TRIAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND purchase_date > previous_expires_date AND transaction_reason = 'RENEWAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND purchase_date > previous_expires_date AND coalesce(transaction_reason, '') <> 'RENEWAL' THEN 1 ELSE 0 END) AS BIGINT) FROM transactions WHERE product_type = 'Auto-Renewable Subscription' AND period_position IS NOT NULL AND TRUE GROUP BY 1, 2"#,
        #"DROP INDEX IF EXISTS transactions_by_revocation"#,
        #"CREATE INDEX transactions_by_revocation ON transactions (revocation_date, product_type, product_id, currency, price, revocation_percentage)"#,
        #"DROP INDEX IF EXISTS subscription_summaries_by_end"#,
        #"CREATE INDEX subscription_summaries_by_end ON subscription_summaries (standing_expires_date, standing_purchase_date, last_revoked, grace_period_expires_date, is_in_billing_retry_period, expiration_intent, product_id)"#,
    ]

    /// Version 8: the summaries counted per expiry day, made from the summaries held (ExpiryDays as it was).
    static let expiryDays: [String] = [
        #"CREATE TABLE subscription_expiry_days (day BIGINT NOT NULL, product_id TEXT NOT NULL, currency TEXT NOT NULL, period_length BIGINT NOT NULL, revoked BIGINT NOT NULL, retry BIGINT NOT NULL, subscriptions BIGINT NOT NULL, price_sum BIGINT NOT NULL, PRIMARY KEY (day, product_id, currency, period_length, revoked, retry))"#,
        #"INSERT INTO subscription_expiry_days (day, product_id, currency, period_length, revoked, retry, subscriptions, price_sum) SELECT CASE WHEN standing_expires_date IS NULL THEN -4611686018427387904 WHEN standing_expires_date >= 0 THEN standing_expires_date / 86400000 ELSE -((86399999 - standing_expires_date) / 86400000) END, product_id, coalesce(standing_currency, ''), coalesce(standing_expires_date, 0) - coalesce(standing_purchase_date, 0), last_revoked, CASE WHEN is_in_billing_retry_period = 1 THEN 1 ELSE 0 END, count(*), CAST(sum(coalesce(standing_price, 0)) AS BIGINT) FROM subscription_summaries WHERE TRUE GROUP BY 1, 2, 3, 4, 5, 6"#,
        #"CREATE INDEX subscription_summaries_by_purchase ON subscription_summaries (standing_purchase_date)"#,
        #"CREATE INDEX subscription_summaries_by_grace ON subscription_summaries (grace_period_expires_date)"#,
    ]

    /// Version 11: each summary's source rows, the summaries made again with them, a subscription's transactions by
    /// purchase, and the expiry days made again (SubscriptionSummaries and ExpiryDays as they were).
    static let summarySources: [String] = [
        #"ALTER TABLE subscription_summaries ADD COLUMN standing_transaction_id TEXT"#,
        #"ALTER TABLE subscription_summaries ADD COLUMN last_transaction_id TEXT"#,
        #"DELETE FROM subscription_summaries"#,
        #"""
        WITH last AS (
          SELECT original_transaction_id, transaction_id, product_id, revocation_date, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(transaction_id) OVER standing_order END AS standing_transaction_id, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(product_id) OVER standing_order END AS standing_product_id, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(purchase_date) OVER standing_order END AS standing_purchase_date, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(expires_date) OVER standing_order END AS standing_expires_date, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(price) OVER standing_order END AS standing_price, CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(currency) OVER standing_order END AS standing_currency,
            ROW_NUMBER() OVER (PARTITION BY original_transaction_id
              ORDER BY purchase_date IS NULL, purchase_date DESC, transaction_id DESC) AS position
          FROM transactions WHERE product_type = 'Auto-Renewable Subscription'
          WINDOW standing_order AS (PARTITION BY original_transaction_id ORDER BY revocation_date IS NOT NULL,
            expires_date IS NULL, expires_date DESC, purchase_date IS NOT NULL, purchase_date, transaction_id)
        ) INSERT INTO subscription_summaries (original_transaction_id, product_id, standing_purchase_date, standing_expires_date, standing_price, standing_currency, last_revoked, grace_period_expires_date, is_in_billing_retry_period, expiration_intent, standing_transaction_id, last_transaction_id) SELECT last.original_transaction_id AS original_transaction_id, coalesce(last.standing_product_id, last.product_id, '') AS product_id, last.standing_purchase_date AS standing_purchase_date, last.standing_expires_date AS standing_expires_date, last.standing_price AS standing_price, last.standing_currency AS standing_currency, CASE WHEN last.revocation_date IS NOT NULL THEN 1 ELSE 0 END AS last_revoked, renewal.grace_period_expires_date AS grace_period_expires_date, renewal.is_in_billing_retry_period AS is_in_billing_retry_period, renewal.expiration_intent AS expiration_intent, last.standing_transaction_id AS standing_transaction_id, last.transaction_id AS last_transaction_id
        FROM last LEFT JOIN renewal_infos AS renewal ON renewal.original_transaction_id = last.original_transaction_id
        WHERE last.position = 1
        """#,
        #"DROP INDEX transactions_by_original"#,
        #"CREATE INDEX transactions_by_original_purchase ON transactions (original_transaction_id, purchase_date, transaction_id)"#,
        #"DELETE FROM subscription_expiry_days"#,
        #"INSERT INTO subscription_expiry_days (day, product_id, currency, period_length, revoked, retry, subscriptions, price_sum) SELECT CASE WHEN standing_expires_date IS NULL THEN -4611686018427387904 WHEN standing_expires_date >= 0 THEN standing_expires_date / 86400000 ELSE -((86399999 - standing_expires_date) / 86400000) END, product_id, coalesce(standing_currency, ''), coalesce(standing_expires_date, 0) - coalesce(standing_purchase_date, 0), last_revoked, CASE WHEN is_in_billing_retry_period = 1 THEN 1 ELSE 0 END, count(*), CAST(sum(coalesce(standing_price, 0)) AS BIGINT) FROM subscription_summaries WHERE TRUE GROUP BY 1, 2, 3, 4, 5, 6"#,
    ]

    /// Version 12: the periods begun per day, product and currency, by kind, with all of them and their prices added up
    /// (the revenue's gross), made from the rows held (FlowDays as it was).
    static let flowDaysByCurrency: [String] = [
        #"DROP TABLE subscription_flow_days"#,
        #"CREATE TABLE subscription_flow_days (day BIGINT NOT NULL, product_id TEXT NOT NULL, currency TEXT NOT NULL, new_subscriptions BIGINT NOT NULL, trial_starts BIGINT NOT NULL, renewals BIGINT NOT NULL, trial_conversions BIGINT NOT NULL, recoveries BIGINT NOT NULL, reactivations BIGINT NOT NULL, periods BIGINT NOT NULL, price_sum BIGINT NOT NULL, PRIMARY KEY (day, product_id, currency))"#,
        #"INSERT INTO subscription_flow_days (day, product_id, currency, new_subscriptions, trial_starts, renewals, trial_conversions, recoveries, reactivations, periods, price_sum) SELECT purchase_date / 86400000, coalesce(product_id, ''), coalesce(currency, ''), CAST(sum(CASE WHEN period_position = 1 THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position = 1 AND offer_discount_type = 'FREE_TRIAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND purchase_date <= coalesce(previous_expires_date, purchase_date) THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND previous_offer_discount_type = 'FREE_TRIAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND purchase_date > previous_expires_date AND transaction_reason = 'RENEWAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND purchase_date > previous_expires_date AND coalesce(transaction_reason, '') <> 'RENEWAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(1) AS BIGINT), CAST(sum(coalesce(price, 0)) AS BIGINT) FROM transactions WHERE product_type = 'Auto-Renewable Subscription' AND period_position IS NOT NULL AND purchase_date IS NOT NULL AND TRUE GROUP BY 1, 2, 3"#,
    ]

    /// Version 13: the same counts with what the rates count besides (paid periods, those refunded,
    /// first paid periods, converted trials), made from the rows held (FlowDays as it was).
    static let flowDaysWithRates: [String] = [
        #"DROP TABLE subscription_flow_days"#,
        #"CREATE TABLE subscription_flow_days (day BIGINT NOT NULL, product_id TEXT NOT NULL, currency TEXT NOT NULL, new_subscriptions BIGINT NOT NULL, trial_starts BIGINT NOT NULL, renewals BIGINT NOT NULL, trial_conversions BIGINT NOT NULL, recoveries BIGINT NOT NULL, reactivations BIGINT NOT NULL, periods BIGINT NOT NULL, price_sum BIGINT NOT NULL, paid_periods BIGINT NOT NULL, refunded_paid_periods BIGINT NOT NULL, first_paid_periods BIGINT NOT NULL, converted_trials BIGINT NOT NULL, PRIMARY KEY (day, product_id, currency))"#,
        #"INSERT INTO subscription_flow_days (day, product_id, currency, new_subscriptions, trial_starts, renewals, trial_conversions, recoveries, reactivations, periods, price_sum, paid_periods, refunded_paid_periods, first_paid_periods, converted_trials) SELECT purchase_date / 86400000, coalesce(product_id, ''), coalesce(currency, ''), CAST(sum(CASE WHEN period_position = 1 THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position = 1 AND offer_discount_type = 'FREE_TRIAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND purchase_date <= coalesce(previous_expires_date, purchase_date) THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND previous_offer_discount_type = 'FREE_TRIAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND purchase_date > previous_expires_date AND transaction_reason = 'RENEWAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position > 1 AND purchase_date > previous_expires_date AND coalesce(transaction_reason, '') <> 'RENEWAL' THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(1) AS BIGINT), CAST(sum(coalesce(price, 0)) AS BIGINT), CAST(sum(CASE WHEN price > 0 THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN price > 0 AND revocation_date IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN price > 0 AND (period_position = 1 OR (period_position = 2 AND previous_offer_discount_type = 'FREE_TRIAL')) THEN 1 ELSE 0 END) AS BIGINT), CAST(sum(CASE WHEN period_position = 1 AND offer_discount_type = 'FREE_TRIAL' AND EXISTS (SELECT 1 FROM transactions AS second_period WHERE second_period.original_transaction_id = transactions.original_transaction_id AND second_period.period_position = 2 AND second_period.purchase_date IS NOT NULL AND second_period.product_type = 'Auto-Renewable Subscription' AND second_period.price > 0) THEN 1 ELSE 0 END) AS BIGINT) FROM transactions WHERE product_type = 'Auto-Renewable Subscription' AND period_position IS NOT NULL AND purchase_date IS NOT NULL AND TRUE GROUP BY 1, 2, 3"#,
    ]
}
