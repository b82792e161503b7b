/* System calls of several kinds: plain, with buffers in and out, a
 * sleep, a memory mapping; each leaves user mode and comes back.  And a
 * child started with posix_spawn (a vfork: the parent waits in the kernel
 * until the child has exec'd), which runs untraced. */
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
	struct timespec ts = { 0, 100000 };
	char buf[64], *child[] = { "true", NULL };
	long n = getpid() + getppid();
	pid_t pid;
	int fd = open("/dev/zero", O_RDONLY);
	char *p;

	n += read(fd, buf, sizeof(buf));
	close(fd);
	fd = open("/dev/null", O_WRONLY);
	n += write(fd, "ptrr\n", 5);
	close(fd);
	nanosleep(&ts, NULL);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p != MAP_FAILED) {
		memset(p, 1, 4096);
		n += p[100];
		munmap(p, 4096);
	}
	if (posix_spawnp(&pid, "true", NULL, NULL, child, environ) == 0)
		waitpid(pid, NULL, 0);
	return n < 0;
}
