"""Apple's `api_client` module by Apple's names: `AppStoreServerAPIClient`,
`AsyncAppStoreServerAPIClient`, `APIException`, `APIError` and
`GetTransactionHistoryVersion`, with Apple's signatures and methods, on libreceipt's client
(`libreceipt.api`), which verifies every signed member of every answer.

Answers come back as `DecodedPayload`s: Apple's member names as attributes
(`response.signedTransactions`, `response.hasMore`, `response.revision`, None when absent),
and beside each signed member its verified payload under the member's name without `signed`
(`response.transactions[0].productId`). Apple's request models (`TransactionHistoryRequest`, …)
are taken as they are. A method whose answer Apple's library does not return returns None.
An argument Apple's server would refuse is refused before anything is sent, as the APIException
Apple's server answers it with (HTTP 400, `api_error` INVALID_TRANSACTION_ID, ...), which is also
a ValueError."""
from .. import api as _api
from .signed_data_verifier import _wrapped

APIException = _api.APIException
APIError = _api.APIError
#: An argument Apple's server would refuse, refused before sending: an APIException with Apple's code.
APIArgumentError = _api.APIArgumentError
GetTransactionHistoryVersion = _api.GetTransactionHistoryVersion


class AppStoreServerAPIClient(_api.AppStoreServerAPIClient):
    def _invoke(self, call, arguments, returns=True):
        answer = super()._invoke(call, arguments, returns)
        return _wrapped(answer) if returns else None


class AsyncAppStoreServerAPIClient(_api.AsyncAppStoreServerAPIClient):
    async def _invoke(self, call, arguments, returns=True):
        answer = await super()._invoke(call, arguments, returns)
        return _wrapped(answer) if returns else None
