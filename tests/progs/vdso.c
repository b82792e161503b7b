/* Calls that run in the vDSO, without entering the kernel: the clocks
 * and the time of day. */
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

int main(void)
{
	struct timespec ts;
	struct timeval tv;
	long sum = 0;

	for (int i = 0; i < 3; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sum += ts.tv_nsec & 1;
		clock_gettime(CLOCK_REALTIME, &ts);
		sum += ts.tv_nsec & 1;
		gettimeofday(&tv, NULL);
		sum += tv.tv_usec & 1;
		sum += time(NULL) & 1;
	}
	return sum < 0;
}
