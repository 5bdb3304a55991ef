/*
 * status.c — turns a failed core call (PrStatus + PrError) into a PostgreSQL ERROR, tells the core
 * when the statement is being cancelled, and runs optional steps whose ERROR must not fail the call.
 */
#include "powerrank.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/resowner.h"

/*
 * The core's should_stop (the driver's between iterations, the graph build's between steps): true
 * once a query cancel or backend termination is pending.  Only reads the interrupt flags.
 */
bool
powerrank_cancel_requested(void *arg)
{
	return InterruptPending && (QueryCancelPending || ProcDiePending);
}

/* Raises the ERROR matching err->status; what names the step that failed ("graph build", ...). */
void
powerrank_report_core_error(const char *what, const PrError *err)
{
	const char *detail = err->message[0] != '\0' ? err->message : pr_status_name(err->status);

	switch (err->status)
	{
		case PR_ERR_NOMEM:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory during powerrank %s", what),
					 errdetail("%s", detail),
					 errhint("Rank a smaller graph or give the server more memory.")));
			break;
		case PR_ERR_INVALID:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid input to powerrank %s: %s", what, detail),
					 errhint("Correct the edge rows or the value the message names, then run the call again.")));
			break;
		case PR_ERR_INTERRUPTED:
			/* the pending cancel's own ERROR (statement timeout, user request...) */
			CHECK_FOR_INTERRUPTS();
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("powerrank %s was interrupted", what),
					 errhint("The call was cancelled; run it again when it may finish.")));
			break;
		case PR_ERR_TOO_LARGE:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("graph too large for powerrank %s", what),
					 errdetail("%s", detail),
					 errhint("powerrank supports at most 2147483647 nodes.")));
			break;
		case PR_ERR_UNSUPPORTED:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("powerrank %s is not supported by this engine", what),
					 errdetail("%s", detail),
					 errhint("Run it with device => 'cpu'.")));
			break;
		case PR_ERR_ENGINE:
		case PR_OK:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("powerrank %s failed: %s", what, detail),
			 errhint("Run it with device => 'cpu'; if it fails there too, report the message.")));
}

/*
 * Runs fn(arg) inside a subtransaction and returns true; on an ERROR other than a cancel, rolls
 * the subtransaction back (which destroys any segment it created), puts the error's message into
 * message and returns false.  For optional steps (caching, the service's build, the progress
 * entries) whose failure (say, no room left for shared memory) must not fail the ranking.
 */
bool
powerrank_try_in_subtransaction(void (*fn) (void *), void *arg, char *message, size_t size)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(arg);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *error;

		MemoryContextSwitchTo(cxt);
		error = CopyErrorData();
		if (error->sqlerrcode == ERRCODE_QUERY_CANCELED)
			PG_RE_THROW();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		strlcpy(message, error->message, size);
		FreeErrorData(error);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}
