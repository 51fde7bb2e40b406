"""Apple's `api_client` module by Apple's names: `AppStoreServerAPIClient`,
`AsyncAppStoreServerAPIClient`, `APIException`, `APIError` and
`GetTransactionHistoryVersion`, with Apple's signatures and methods, on libreceipt's client
(`libreceipt.api`), which verifies every signed member of every answer.

Answers come back as Apple's response models (`HistoryResponse`, `TransactionInfoResponse`,
`StatusResponse`, ...; `appstoreserverlibrary.models`), built from the answer the way Apple's
library builds them: Apple's members, enumerations as Apple's enum members, signed members as the
JWS text. What libreceipt adds: before a method returns, every signed member of the answer has been
verified by libreceipt's core against the client's verifier (a member that does not verify raises
ReceiptError naming it), so decoding one with `SignedDataVerifier` cannot fail on a forged one.
A method whose answer Apple's library does not return returns None. Apple's request models
(`TransactionHistoryRequest`, ...) are taken as they are. The key id, issuer id and bundle id are taken as
Apple's library takes them, where only Apple's server can judge them (its placeholders `keyId` and
`issuerId`, an unknown bundle id: Apple answers 401 or 404); what would leak a secret or break the
token's header is still refused before any token is made: whitespace, control characters, PEM armour,
more than 64 characters. (`libreceipt.api`, the library's own client, takes only App Store Connect's
forms: a 10-character key id and a UUID issuer id.) An argument Apple's server would refuse is
refused before anything is sent, as the APIException Apple's server answers it with (HTTP 400,
`api_error` INVALID_TRANSACTION_ID, ...), which is also a ValueError.

The `iter_…` methods (libreceipt's, not Apple's) follow the pages to the end and yield Apple's
decoded models (`JWSTransactionDecodedPayload`, `ResponseBodyV2DecodedPayload`), verified."""
from .. import api as _api
from .signed_data_verifier import apple_model

APIException = _api.APIException
APIError = _api.APIError
#: An argument Apple's server would refuse, refused before sending: an APIException with Apple's code.
APIArgumentError = _api.APIArgumentError
GetTransactionHistoryVersion = _api.GetTransactionHistoryVersion

#: Apple's method -> the response model Apple's library returns (its api_client, 3.1.2).
RESPONSE_MODELS = {
    "extend_renewal_date_for_all_active_subscribers": "MassExtendRenewalDateResponse",
    "extend_subscription_renewal_date": "ExtendRenewalDateResponse",
    "get_all_subscription_statuses": "StatusResponse",
    "get_refund_history": "RefundHistoryResponse",
    "get_status_of_subscription_renewal_date_extensions": "MassExtendRenewalDateStatusResponse",
    "get_test_notification_status": "CheckTestNotificationResponse",
    "get_notification_history": "NotificationHistoryResponse",
    "get_transaction_history": "HistoryResponse",
    "get_transaction_info": "TransactionInfoResponse",
    "look_up_order_id": "OrderLookupResponse",
    "request_test_notification": "SendTestNotificationResponse",
    "get_image_list": "GetImageListResponse",
    "get_message_list": "GetMessageListResponse",
    "get_default_message": "DefaultConfigurationResponse",
    "get_realtime_url": "RealtimeUrlResponse",
    "initiate_performance_test": "PerformanceTestResponse",
    "get_performance_test_results": "PerformanceTestResultResponse",
    "get_app_transaction_info": "AppTransactionInfoResponse",
}

# The verified payloads libreceipt's answers carry beside Apple's members (libreceipt.api), left out
# of Apple's models: "signedTransactions" -> "transactions", "signedTransactionInfo" -> "transaction_info", ...
_ITEM_MODELS = {"transactions": "JWSTransactionDecodedPayload", "notificationHistory": "ResponseBodyV2DecodedPayload"}


def _as_apple(call, answer):
    """Apple's response model of `call` from libreceipt's verified answer (the answer itself for a call
    Apple's client does not have)."""
    name = RESPONSE_MODELS.get(call)
    return apple_model(name, answer) if name else answer


def _item_as_apple(member, item):
    return apple_model(_ITEM_MODELS[member], item) if member in _ITEM_MODELS else item


class _AppleArguments:
    """Apple's arguments: the ids as Apple's library takes them (see the module's documentation), and
    Apple's refusal of the Xcode environment, in Apple's words."""
    _id_form = _api.IDS_HEADER_SAFE

    def __init__(self, signing_key, key_id, issuer_id, bundle_id, environment, **options):
        if getattr(environment, "value", environment) == "Xcode":
            raise ValueError("Xcode is not a supported environment for an AppStoreServerAPIClient")
        super().__init__(signing_key, key_id, issuer_id, bundle_id, environment, **options)


class AppStoreServerAPIClient(_AppleArguments, _api.AppStoreServerAPIClient):
    def _invoke(self, call, arguments, returns=True):
        answer = super()._invoke(call, arguments, returns)
        return _as_apple(call, answer) if returns else None

    def _items(self, call, arguments, member, pick=lambda item: item):
        for item in super()._items(call, arguments, member, pick):
            yield _item_as_apple(member, item)


class AsyncAppStoreServerAPIClient(_AppleArguments, _api.AsyncAppStoreServerAPIClient):
    async def _invoke(self, call, arguments, returns=True):
        answer = await super()._invoke(call, arguments, returns)
        return _as_apple(call, answer) if returns else None

    async def _items(self, call, arguments, member, pick=lambda item: item):
        async for item in super()._items(call, arguments, member, pick):
            yield _item_as_apple(member, item)
